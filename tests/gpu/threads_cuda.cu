// threads_cuda.cu - GPU check for cuptirec: a main thread and worker threads
// launch kernels and do memcpy/memset, each printing its own ids.
//
// Usage: threads_cuda [NWORKERS [EXIT_STATUS]]
// Prints "PROC pid t0_ns" first, "THREAD role gettid pthread_self" for every
// thread, "DONE t1_ns" last, and exits with EXIT_STATUS (default 0), so the
// launcher's status pass-through can be checked.  Each thread launches its own
// kernel (k_main, k_w0, k_w1, ...: the name tells the issuing thread), on its
// own stream, inside a user annotation "region_<role>" and with external id
// 1000 + index when the collector's C API is reachable (CUDA_INJECTION64_PATH
// names it).  It also calls the APIs the collector must filter out
// (cudaGetDevice, cudaEventCreate/Destroy).
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define KERNEL(NAME) \
	__global__ void NAME(float *p, int n) \
	{ \
		int i = blockIdx.x * blockDim.x + threadIdx.x; \
		if (i < n) \
			p[i] += 1.0f; \
	}
KERNEL(k_main)
KERNEL(k_w0)
KERNEL(k_w1)
KERNEL(k_w2)
KERNEL(k_w3)
typedef void (*kfn)(float *, int);
static kfn kernels[] = { k_main, k_w0, k_w1, k_w2, k_w3 };
static const char *roles[] = { "main", "w0", "w1", "w2", "w3" };

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "threads_cuda: %s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

static uint64_t (*api_push_annotation)(const char *);
static int (*api_pop_annotation)(void);
static int (*api_push_ext)(uint64_t);
static int (*api_pop_ext)(uint64_t *);
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

// The collector's C API, when it was injected (the driver loaded it already).
static void load_api(void)
{
	const char *p = getenv("CUDA_INJECTION64_PATH");
	void *h = p ? dlopen(p, RTLD_NOW | RTLD_NOLOAD) : NULL;
	if (!h)
		return;
	api_push_annotation = (uint64_t (*)(const char *))dlsym(h, "cuptirec_push_annotation");
	api_pop_annotation = (int (*)(void))dlsym(h, "cuptirec_pop_annotation");
	api_push_ext = (int (*)(uint64_t))dlsym(h, "cuptirec_push_external_id");
	api_pop_ext = (int (*)(uint64_t *))dlsym(h, "cuptirec_pop_external_id");
}

static void *work(void *arg)
{
	int idx = (int)(intptr_t)arg, n = 1 << 16, i, dev = -1;
	char region[32];
	cudaStream_t s;
	cudaEvent_t ev;
	float *d, *h;

	pthread_mutex_lock(&mu);
	printf("THREAD %s %ld %llu\n", roles[idx], (long)syscall(SYS_gettid),
	       (unsigned long long)(uintptr_t)pthread_self());
	fflush(stdout);
	pthread_mutex_unlock(&mu);
	CK(cudaGetDevice(&dev));       // filtered by the collector
	CK(cudaEventCreate(&ev));      // filtered
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaMalloc(&d, n * sizeof *d));
	CK(cudaMallocHost(&h, n * sizeof *h));
	snprintf(region, sizeof region, "region_%s", roles[idx]);
	if (idx > 0 && api_push_annotation)
		api_push_annotation(region);
	if (idx > 0 && api_push_ext)
		api_push_ext(1000 + idx);
	CK(cudaMemsetAsync(d, 0, n * sizeof *d, s));
	for (i = 0; i < 40; i++) {
		kernels[idx]<<<(n + 255) / 256, 256, 0, s>>>(d, n);
		CK(cudaGetLastError());
		if (i % 10 == 9) {
			CK(cudaMemcpyAsync(h, d, n * sizeof *d, cudaMemcpyDeviceToHost, s));
			CK(cudaMemcpyAsync(d, h, n * sizeof *d, cudaMemcpyHostToDevice, s));
		}
	}
	CK(cudaEventRecord(ev, s));
	CK(cudaStreamSynchronize(s));
	if (idx > 0 && api_pop_ext) {
		uint64_t got = 0;
		api_pop_ext(&got);
		if (got != (uint64_t)(1000 + idx))
			fprintf(stderr, "threads_cuda: popped external id %llu\n", (unsigned long long)got);
	}
	if (idx > 0 && api_pop_annotation)
		api_pop_annotation();
	CK(cudaEventDestroy(ev));      // filtered
	CK(cudaFreeHost(h));
	CK(cudaFree(d));
	CK(cudaStreamDestroy(s));
	return NULL;
}

int main(int argc, char **argv)
{
	int nw = argc > 1 ? atoi(argv[1]) : 3, status = argc > 2 ? atoi(argv[2]) : 0, i;
	pthread_t t[4];

	if (nw < 0 || nw > 4)
		nw = 3;
	printf("PROC %ld %llu\n", (long)getpid(), (unsigned long long)now_ns());
	CK(cudaFree(0));               // initialise CUDA (and the collector)
	load_api();
	printf("API %s\n", api_push_annotation ? "yes" : "no");
	work((void *)(intptr_t)0);
	for (i = 0; i < nw; i++)
		pthread_create(&t[i], NULL, work, (void *)(intptr_t)(i + 1));
	for (i = 0; i < nw; i++)
		pthread_join(t[i], NULL);
	CK(cudaDeviceSynchronize());
	printf("DONE %llu\n", (unsigned long long)now_ns());
	fflush(stdout);
	return status;
}
