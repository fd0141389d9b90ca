// Facts about the machine a profile runs on, for the run record (host, CPU) and for counting nodes.
#pragma once

#include <string>

namespace lagom::profiler {

// gethostname(), "" when it fails.
std::string host_name();
// /proc/cpuinfo's first "model name", "" when unknown.
std::string cpu_model();
// What makes two ranks "the same node": the host name plus the network namespace (ranks in different
// namespaces of one host, as scripts/netns-cluster.sh makes them, talk over a link like separate nodes).
std::string node_identity();

}  // namespace lagom::profiler
