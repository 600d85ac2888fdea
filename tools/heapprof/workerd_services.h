// The workers a worker's service bindings and its Durable Object bindings'
// script_name name, for `heapprof run --runtime workerd`: each one another
// worker of the user's, found by --service
// NAME=WORKER or as a folder beside the worker's own whose wrangler config is
// named NAME, read from its own configuration (and its services in turn), and
// served by the same workerd.
#pragma once

#include <string>
#include <vector>

#include "heapprof/core/status.h"
#include "heapprof/remote/workerd_config.h"
#include "heapprof/workload/worker_config.h"

namespace heapprof::cli {

// The service name of the profiled worker in workerd's config: its `name`
// when it is a plain name, else "main".
std::string WorkerdServiceName(const WorkerConfig& config);

// Every worker the service bindings and the Durable Object classes of other
// scripts of `config` reach, in the order found, each from its own
// configuration (its warning line printed like the worker's); a worker that
// owns such a class has it among its namespaces. `service_flags` are --service
// NAME=WORKER. An error names the binding whose worker cannot be found, and
// --service.
Result<std::vector<remote::WorkerdWorker>> WorkerdServices(const WorkerConfig& config,
                                                           const std::vector<std::string>& service_flags);

}  // namespace heapprof::cli
