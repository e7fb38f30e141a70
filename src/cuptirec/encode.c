/* encode.c - one CUPTI activity record to one trace-window event. */
#include "encode.h"
#include "names.h"

#include <string.h>

/* names.h spells CUPTI's copy and memory kinds as numbers so that it can be
 * tested without CUPTI; here they must be CUPTI's. */
#define CREC_SAME(a, b) _Static_assert((long)(a) == (long)(b), #a " is not " #b)
CREC_SAME(CREC_MEMCPY_KIND_UNKNOWN, CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN);
CREC_SAME(CREC_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
CREC_SAME(CREC_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH);
CREC_SAME(CREC_MEMCPY_KIND_HTOA, CUPTI_ACTIVITY_MEMCPY_KIND_HTOA);
CREC_SAME(CREC_MEMCPY_KIND_ATOH, CUPTI_ACTIVITY_MEMCPY_KIND_ATOH);
CREC_SAME(CREC_MEMCPY_KIND_ATOA, CUPTI_ACTIVITY_MEMCPY_KIND_ATOA);
CREC_SAME(CREC_MEMCPY_KIND_ATOD, CUPTI_ACTIVITY_MEMCPY_KIND_ATOD);
CREC_SAME(CREC_MEMCPY_KIND_DTOA, CUPTI_ACTIVITY_MEMCPY_KIND_DTOA);
CREC_SAME(CREC_MEMCPY_KIND_DTOD, CUPTI_ACTIVITY_MEMCPY_KIND_DTOD);
CREC_SAME(CREC_MEMCPY_KIND_HTOH, CUPTI_ACTIVITY_MEMCPY_KIND_HTOH);
CREC_SAME(CREC_MEMCPY_KIND_PTOP, CUPTI_ACTIVITY_MEMCPY_KIND_PTOP);
CREC_SAME(CREC_MEMORY_KIND_UNKNOWN, CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN);
CREC_SAME(CREC_MEMORY_KIND_PAGEABLE, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE);
CREC_SAME(CREC_MEMORY_KIND_PINNED, CUPTI_ACTIVITY_MEMORY_KIND_PINNED);
CREC_SAME(CREC_MEMORY_KIND_DEVICE, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
CREC_SAME(CREC_MEMORY_KIND_ARRAY, CUPTI_ACTIVITY_MEMORY_KIND_ARRAY);
CREC_SAME(CREC_MEMORY_KIND_MANAGED, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED);
CREC_SAME(CREC_MEMORY_KIND_DEVICE_STATIC, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC);
CREC_SAME(CREC_MEMORY_KIND_MANAGED_STATIC, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC);
CREC_SAME(CREC_MEMORY_KIND_FORCE_INT, CUPTI_ACTIVITY_MEMORY_KIND_FORCE_INT);

void crec_ctxmap_put(crec_ctxmap *m, uint32_t ctx, uint32_t dev)
{
	uint32_t d;

	if (crec_ctxmap_get(m, ctx, &d) || m->n >= CREC_CTXMAP_CAP)
		return;
	m->e[m->n].ctx = ctx;
	m->e[m->n].dev = dev;
	m->n++;
}

int crec_ctxmap_get(const crec_ctxmap *m, uint32_t ctx, uint32_t *dev)
{
	uint32_t i;

	/* a handful of contexts: a scan beats a hash */
	for (i = 0; i < m->n; i++)
		if (m->e[i].ctx == ctx) {
			*dev = m->e[i].dev;
			return 1;
		}
	return 0;
}

/* A record names context CTX on device DEV: note both (see crec_enc). */
static void crec_learn(crec_enc *e, uint32_t ctx, uint32_t dev)
{
	if (e->ctxmap)
		crec_ctxmap_put(e->ctxmap, ctx, dev);
	if (dev < CREC_MAX_DEVICES)
		e->devices[dev / 64] |= 1ull << (dev % 64);
}

const char *crec_overhead_name(uint32_t k)
{
	switch (k) {
	case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER: return "Driver Compiler";
	case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH: return "Buffer Flush";
	case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION: return "Instrumentation";
	case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE: return "Resource";
	case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING: return "Runtime Triggered Module Loading";
	case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING: return "Lazy Function Loading";
	case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL: return "Command Buffer Full";
	case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST: return "Activity Buffer Request";
	case CUPTI_ACTIVITY_OVERHEAD_UVM_ACTIVITY_INIT: return "UVM Activity Init";
	default: return "Unknown";
	}
}

/* A timestamp through the encoder's clock map. */
static uint64_t crec_ts(const crec_enc *e, uint64_t ts)
{
	return e->clock ? crec_clock_map(e->clock, ts) : ts;
}

/* Append `,"KEY":V` for an unsigned / signed value. */
#define PUTU(k, v) do { crec_jbuf_key(out, k); crec_jbuf_u64(out, (uint64_t)(v)); } while (0)
#define PUTI(k, v) do { crec_jbuf_key(out, k); crec_jbuf_i64(out, (int64_t)(v)); } while (0)

/* Append the API record's name: CUPTI's callback name without a trailing
 * "_v<digits>", or "cbid_<N>". */
static void crec_api_name(crec_enc *e, int driver, uint32_t cbid, crec_jbuf *out)
{
	const char *nm = e->api_name ? e->api_name(e->ud, driver, cbid) : NULL;
	size_t n, i;

	if (!nm || !*nm) {
		crec_jbuf_lit(out, "\"cbid_");
		crec_jbuf_u64(out, cbid);
		crec_jbuf_lit(out, "\"");
		return;
	}
	n = strlen(nm);
	/* find the last "_v" and drop it when only digits follow */
	for (i = n; i-- > 1;) {
		if (nm[i] == 'v' && nm[i - 1] == '_') {
			size_t j = i + 1;
			while (j < n && nm[j] >= '0' && nm[j] <= '9')
				j++;
			if (j == n && j > i + 1)
				n = i - 1;
			break;
		}
	}
	crec_jbuf_str(out, nm, n);
}

int crec_encode(crec_enc *e, const CUpti_Activity *rec, crec_jbuf *out)
{
	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
		const CUpti_ActivityKernel10 *k = (const void *)rec;
		const char *nm = k->name ? k->name : "", *dm;
		crec_learn(e, k->contextId, k->deviceId);
		if (k->start == 0 || k->end == 0) {
			e->incomplete++;
			return 0;
		}
		crec_jbuf_lit(out, "{\"kind\":\"kernel\"");
		PUTU("device_id", k->deviceId);
		PUTU("context_id", k->contextId);
		PUTU("stream_id", k->streamId);
		PUTU("correlation_id", k->correlationId);
		PUTU("graph_node_id", k->graphNodeId);
		PUTU("graph_id", k->graphId);
		PUTU("start_ns", crec_ts(e, k->start));
		PUTU("end_ns", crec_ts(e, k->end));
		/* the launch (window format 2): what Kineto's kernel args and its
		 * occupancy estimate are computed from */
		PUTI("grid_x", k->gridX);
		PUTI("grid_y", k->gridY);
		PUTI("grid_z", k->gridZ);
		PUTI("block_x", k->blockX);
		PUTI("block_y", k->blockY);
		PUTI("block_z", k->blockZ);
		PUTU("registers_per_thread", k->registersPerThread);
		PUTI("static_shared_memory", k->staticSharedMemory);
		PUTI("dynamic_shared_memory", k->dynamicSharedMemory);
		/* collected only under cuptiActivityEnableLatencyTimestamps */
		if (k->queued != CUPTI_TIMESTAMP_UNKNOWN)
			PUTU("queued_ns", crec_ts(e, k->queued));
		if (k->submitted != CUPTI_TIMESTAMP_UNKNOWN)
			PUTU("submitted_ns", crec_ts(e, k->submitted));
		PUTU("channel_id", k->channelID);
		PUTU("channel_type", (uint32_t)k->channelType);
		crec_jbuf_lit(out, ",\"annotation\":null,\"name\":");
		dm = e->demangle ? e->demangle(e->ud, nm) : NULL;
		if (dm)
			nm = dm;
		crec_jbuf_str(out, nm, strlen(nm));
		crec_jbuf_lit(out, "}");
		e->count[CREC_EV_KERNEL]++;
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *m = (const void *)rec;
		char nm[CREC_NAME_MAX];
		size_t n;
		crec_learn(e, m->contextId, m->deviceId);
		if (m->start == 0 || m->end == 0) {
			e->incomplete++;
			return 0;
		}
		crec_jbuf_lit(out, "{\"kind\":\"gpu_memcpy\"");
		PUTU("device_id", m->deviceId);
		PUTU("context_id", m->contextId);
		PUTU("stream_id", m->streamId);
		PUTU("correlation_id", m->correlationId);
		PUTU("runtime_correlation_id", m->runtimeCorrelationId);
		PUTU("graph_node_id", m->graphNodeId);
		PUTU("graph_id", m->graphId);
		PUTU("start_ns", crec_ts(e, m->start));
		PUTU("end_ns", crec_ts(e, m->end));
		PUTU("bytes", m->bytes);
		PUTU("copy_kind", m->copyKind);
		PUTU("src_kind", m->srcKind);
		PUTU("dst_kind", m->dstKind);
		PUTU("flags", m->flags);
		crec_jbuf_lit(out, ",\"annotation\":null,\"name\":");
		n = crec_memcpy_name(nm, sizeof nm, m->copyKind, m->srcKind, m->dstKind);
		crec_jbuf_str(out, nm, n);
		crec_jbuf_lit(out, "}");
		e->count[CREC_EV_MEMCPY]++;
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *m = (const void *)rec;
		char nm[CREC_NAME_MAX];
		size_t n;
		crec_learn(e, m->contextId, m->deviceId);
		if (m->start == 0 || m->end == 0) {
			e->incomplete++;
			return 0;
		}
		crec_jbuf_lit(out, "{\"kind\":\"gpu_memset\"");
		PUTU("device_id", m->deviceId);
		PUTU("context_id", m->contextId);
		PUTU("stream_id", m->streamId);
		PUTU("correlation_id", m->correlationId);
		PUTU("graph_node_id", m->graphNodeId);
		PUTU("graph_id", m->graphId);
		PUTU("start_ns", crec_ts(e, m->start));
		PUTU("end_ns", crec_ts(e, m->end));
		PUTU("bytes", m->bytes);
		PUTU("value", m->value);
		PUTU("memory_kind", m->memoryKind);
		PUTU("flags", m->flags);
		crec_jbuf_lit(out, ",\"annotation\":null,\"name\":");
		n = crec_memset_name(nm, sizeof nm, m->memoryKind);
		crec_jbuf_str(out, nm, n);
		crec_jbuf_lit(out, "}");
		e->count[CREC_EV_MEMSET]++;
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER: {
		const CUpti_ActivityAPI *a = (const void *)rec;
		int driver = rec->kind == CUPTI_ACTIVITY_KIND_DRIVER;
		if (driver)
			crec_jbuf_lit(out, "{\"kind\":\"cuda_driver\"");
		else
			crec_jbuf_lit(out, "{\"kind\":\"cuda_runtime\"");
		PUTU("cbid", a->cbid);
		PUTU("start_ns", crec_ts(e, a->start));
		PUTU("end_ns", crec_ts(e, a->end));
		PUTU("process_id", a->processId);
		PUTU("thread_id", a->threadId);
		PUTU("correlation_id", a->correlationId);
		PUTU("return_value", a->returnValue);
		crec_jbuf_lit(out, ",\"name\":");
		crec_api_name(e, driver, a->cbid, out);
		crec_jbuf_lit(out, "}");
		e->count[driver ? CREC_EV_DRIVER : CREC_EV_RUNTIME]++;
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
		const CUpti_ActivityExternalCorrelation *x = (const void *)rec;
		crec_jbuf_lit(out, "{\"kind\":\"external_correlation\"");
		PUTU("external_kind", x->externalKind);
		PUTU("external_id", x->externalId);
		PUTU("correlation_id", x->correlationId);
		crec_jbuf_lit(out, ",\"name\":\"external_correlation\"}");
		e->count[CREC_EV_EXTCORR]++;
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_OVERHEAD: {
		const CUpti_ActivityOverhead3 *o = (const void *)rec;
		uint64_t oid;
		const char *nm = crec_overhead_name(o->overheadKind);
		switch (o->objectKind) {
		case CUPTI_ACTIVITY_OBJECT_PROCESS: oid = o->objectId.pt.processId; break;
		case CUPTI_ACTIVITY_OBJECT_THREAD: oid = o->objectId.pt.threadId; break;
		case CUPTI_ACTIVITY_OBJECT_DEVICE: oid = o->objectId.dcs.deviceId; break;
		case CUPTI_ACTIVITY_OBJECT_CONTEXT: oid = o->objectId.dcs.contextId; break;
		case CUPTI_ACTIVITY_OBJECT_STREAM: oid = o->objectId.dcs.streamId; break;
		default: oid = 0; break;
		}
		crec_jbuf_lit(out, "{\"kind\":\"overhead\"");
		PUTU("overhead_kind", (uint32_t)o->overheadKind);
		PUTU("object_kind", (uint32_t)o->objectKind);
		PUTU("object_id", oid);
		PUTU("start_ns", crec_ts(e, o->start));
		PUTU("end_ns", crec_ts(e, o->end));
		PUTU("correlation_id", o->correlationId);
		crec_jbuf_lit(out, ",\"name\":");
		crec_jbuf_str(out, nm, strlen(nm));
		crec_jbuf_lit(out, "}");
		e->count[CREC_EV_OVERHEAD]++;
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
		const CUpti_ActivitySynchronization2 *s = (const void *)rec;
		uint32_t dev;
		crec_jbuf_lit(out, "{\"kind\":\"cuda_sync\"");
		PUTU("sync_type", (uint32_t)s->type);
		PUTU("start_ns", crec_ts(e, s->start));
		PUTU("end_ns", crec_ts(e, s->end));
		PUTU("correlation_id", s->correlationId);
		PUTU("context_id", s->contextId);
		/* the record names no device: the context's, when known (window format 2) */
		if (e->ctxmap && crec_ctxmap_get(e->ctxmap, s->contextId, &dev))
			PUTU("device_id", dev);
		/* CUPTI_SYNCHRONIZATION_INVALID_VALUE (all ones) when not applicable */
		PUTU("stream_id", s->streamId);
		PUTU("cuda_event_id", s->cudaEventId);
		PUTU("return_value", s->returnValue);
		crec_jbuf_lit(out, ",\"name\":\"Synchronization\"}");
		e->count[CREC_EV_SYNC]++;
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_CUDA_EVENT: {
		const CUpti_ActivityCudaEvent2 *c = (const void *)rec;
		crec_jbuf_lit(out, "{\"kind\":\"cuda_event\"");
		PUTU("device_id", c->deviceId);
		PUTU("context_id", c->contextId);
		PUTU("stream_id", c->streamId);
		PUTU("correlation_id", c->correlationId);
		PUTU("event_id", c->eventId);
		crec_jbuf_lit(out, ",\"name\":\"cudaEventRecord\"}");
		e->count[CREC_EV_EVENT]++;
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_CONTEXT: {
		const CUpti_ActivityContext3 *c = (const void *)rec;
		crec_learn(e, c->contextId, c->deviceId);
		return 0;
	}
	default:
		e->unknown++;
		return 0;
	}
}
