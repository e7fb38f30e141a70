// bench_launch.cu - overhead benchmark: launches per second of a tiny kernel.
// Usage: bench_launch [N [SPIN_CYCLES]]   (default 200000 launches of an empty
// kernel; with SPIN_CYCLES each kernel busy-waits that many SM clock cycles,
// about 2000 a microsecond on an H200, to see the overhead on kernels that
// are not trivially short).  Prints "LAUNCHES_PER_S x".
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__global__ void empty_kernel(void) {}

__global__ void spin_kernel(long long cycles)
{
	long long t0 = clock64();
	while (clock64() - t0 < cycles)
		;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000, i;
	long long spin = argc > 2 ? atoll(argv[2]) : 0;
	double t0, t1;

	for (i = 0; i < 2000; i++) {   // warm-up: module load, CUPTI buffers
		if (spin)
			spin_kernel<<<1, 1>>>(spin);
		else
			empty_kernel<<<1, 1>>>();
	}
	if (cudaDeviceSynchronize() != cudaSuccess)
		return 1;
	t0 = now_s();
	for (i = 0; i < n; i++) {
		if (spin)
			spin_kernel<<<1, 1>>>(spin);
		else
			empty_kernel<<<1, 1>>>();
	}
	cudaDeviceSynchronize();
	t1 = now_s();
	printf("LAUNCHES_PER_S %.0f\n", n / (t1 - t0));
	return 0;
}
