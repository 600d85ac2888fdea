// heapprof's in-memory KV store for workerd (a worker's module text), private
// to heapprof_remote: workerd_config.cpp writes it beside the config.
#pragma once

namespace heapprof::remote {

extern const char kWorkerdKvStore[];

}  // namespace heapprof::remote
