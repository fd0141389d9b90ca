#include "profiler/group.h"

#include <array>
#include <cstdlib>
#include <numeric>

namespace lagom::profiler {

Error mpi_error(int code, const char* call) {
  std::array<char, MPI_MAX_ERROR_STRING> text{};
  int length = 0;
  MPI_Error_string(code, text.data(), &length);
  return make_error(ErrorCode::failure, std::string(call) + " failed: " +
                                            std::string(text.data(), static_cast<std::size_t>(length)));
}

bool under_mpi_launcher() {
  for (const char* name :
       {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK", "MV2_COMM_WORLD_SIZE"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

std::string mpi_library_version() {
  std::array<char, MPI_MAX_LIBRARY_VERSION_STRING> text{};
  int length = 0;
  MPI_Get_library_version(text.data(), &length);
  std::string version(text.data(), static_cast<std::size_t>(length));
  if (const auto end = version.find_first_of(",\n"); end != std::string::npos) version.resize(end);
  return version;
}

namespace {

class SoloGroup final : public Group {
 public:
  [[nodiscard]] int rank() const override { return 0; }
  [[nodiscard]] int size() const override { return 1; }
  [[nodiscard]] MPI_Comm comm() const override { return MPI_COMM_NULL; }
  Status barrier() override { return {}; }
  Result<double> max(double value) override { return value; }
  Result<double> sum(double value) override { return value; }
  Result<std::int64_t> sum(std::int64_t value) override { return value; }
  Result<std::vector<std::string>> allgather(const std::string& text) override {
    return std::vector<std::string>{text};
  }
  Status broadcast(void*, std::size_t, int) override { return {}; }
};

class MpiGroup final : public Group {
 public:
  explicit MpiGroup(bool owns) : m_owns(owns) {
    MPI_Comm_rank(MPI_COMM_WORLD, &m_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &m_size);
  }
  ~MpiGroup() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (m_owns && finalized == 0) MPI_Finalize();
  }
  MpiGroup(const MpiGroup&) = delete;
  MpiGroup& operator=(const MpiGroup&) = delete;

  [[nodiscard]] int rank() const override { return m_rank; }
  [[nodiscard]] int size() const override { return m_size; }
  [[nodiscard]] MPI_Comm comm() const override { return MPI_COMM_WORLD; }
  Status barrier() override {
    LAGOM_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    return {};
  }
  Result<double> max(double value) override {
    double out = 0;
    LAGOM_MPI_CHECK(MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    return out;
  }
  Result<double> sum(double value) override {
    double out = 0;
    LAGOM_MPI_CHECK(MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    return out;
  }
  Result<std::int64_t> sum(std::int64_t value) override {
    std::int64_t out = 0;
    LAGOM_MPI_CHECK(MPI_Allreduce(&value, &out, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD));
    return out;
  }
  Result<std::vector<std::string>> allgather(const std::string& text) override {
    int length = static_cast<int>(text.size());
    std::vector<int> lengths(static_cast<std::size_t>(m_size));
    LAGOM_MPI_CHECK(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD));
    std::vector<int> offsets(lengths.size());
    std::exclusive_scan(lengths.begin(), lengths.end(), offsets.begin(), 0);
    std::string all(static_cast<std::size_t>(offsets.back() + lengths.back()), '\0');
    LAGOM_MPI_CHECK(MPI_Allgatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(),
                                   MPI_CHAR, MPI_COMM_WORLD));
    std::vector<std::string> out;
    for (std::size_t r = 0; r < lengths.size(); ++r) {
      out.push_back(all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
    }
    return out;
  }
  Status broadcast(void* data, std::size_t bytes, int root) override {
    LAGOM_MPI_CHECK(MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, root, MPI_COMM_WORLD));
    return {};
  }

 private:
  bool m_owns;
  int m_rank = 0;
  int m_size = 1;
};

}  // namespace

std::unique_ptr<Group> make_solo_group() {
  return std::make_unique<SoloGroup>();
}

Result<std::unique_ptr<Group>> make_mpi_group() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  bool owns = false;
  if (initialized == 0) {
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
      return make_error(ErrorCode::failure, "MPI_Init_thread failed");
    }
    owns = true;
  }
  // Errors come back as return codes, so that they become Errors with context instead of aborts.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  return std::unique_ptr<Group>(std::make_unique<MpiGroup>(owns));
}

}  // namespace lagom::profiler
