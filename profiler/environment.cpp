#include "profiler/environment.h"

#include <array>
#include <fstream>
#include <unistd.h>

namespace lagom::profiler {

std::string host_name() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) return "";
  return name.data();
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string model = line.substr(colon + 1);
      model.erase(0, model.find_first_not_of(" \t"));
      return model;
    }
  }
  return "";
}

std::string node_identity() {
  std::array<char, 256> ns{};
  const ssize_t length = readlink("/proc/self/ns/net", ns.data(), ns.size() - 1);
  return host_name() + "/" +
         (length > 0 ? std::string(ns.data(), static_cast<std::size_t>(length)) : std::string());
}

}  // namespace lagom::profiler
