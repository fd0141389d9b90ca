#include "validate/calibrate.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>

#include <Eigen/Dense>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/parallel.h"
#include "validate/runs_csv.h"

namespace lagom::validate {

namespace {

// Levenberg–Marquardt settings (numerical, not physical): a finite-difference step of 1% of the value,
// at most a factor e per step, stop when the cost improves by less than 1e-7 relative.
constexpr double k_difference_step = 0.01;
constexpr double k_max_step = 1.0;
constexpr double k_tolerance = 1e-7;
constexpr int k_max_iterations = 25;
// A column of the Jacobian this small (d ln t / d ln v summed over the runs): the runs do not depend on
// the constant, so the fit cannot say anything about it.
constexpr double k_unconstrained = 1e-6;

// Simulates every run on `clusters` (one per run), `threads` at a time (core/parallel.h: a thread that
// cannot be started leaves its share to the others).
std::vector<ValidatedRun> simulate_all(const std::vector<const PreparedRun*>& runs,
                                       const std::vector<model::ClusterSpec>& clusters, int threads) {
  std::vector<ValidatedRun> out(runs.size());
  parallel_for(runs.size(), static_cast<unsigned>(std::max(1, threads)),
               [&](std::size_t i) { out[i] = simulate_run(*runs[i], clusters[i]); });
  return out;
}

struct Problem {
  const std::vector<const PreparedRun*>& runs;  // the runs fitted (each simulates on the base cluster)
  const model::ClusterSpec& base;
  std::vector<const model::PhysicalConstant*> constants;
  int threads = 1;
  int evaluations = 0;

  [[nodiscard]] model::ClusterSpec with(const Eigen::VectorXd& log_values) const {
    model::ClusterSpec cluster = base;
    for (std::size_t j = 0; j < constants.size(); ++j) {
      constants[j]->set(cluster, std::exp(log_values(static_cast<Eigen::Index>(j))));
    }
    return cluster;
  }
  // Residuals ln(predicted/measured); nullopt when a run stops simulating at these values.
  std::optional<Eigen::VectorXd> residuals(const Eigen::VectorXd& log_values,
                                           std::vector<ValidatedRun>* simulated = nullptr) {
    ++evaluations;
    const model::ClusterSpec cluster = with(log_values);
    std::vector<model::ClusterSpec> clusters;
    clusters.reserve(runs.size());
    for (const PreparedRun* run : runs) clusters.push_back(cluster_for_run(*run, cluster));
    std::vector<ValidatedRun> out = simulate_all(runs, clusters, threads);
    Eigen::VectorXd r(static_cast<Eigen::Index>(out.size()));
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (!out[i].failure.empty() || !(out[i].predicted_s > 0)) return std::nullopt;
      r(static_cast<Eigen::Index>(i)) = std::log(out[i].predicted_s / out[i].measured_s);
    }
    if (simulated) *simulated = std::move(out);
    return r;
  }
};

ErrorStats stats_of(const std::vector<ValidatedRun>& runs) {
  std::vector<const ValidatedRun*> list;
  for (const auto& run : runs) list.push_back(&run);
  return error_stats(list);
}

Result<std::vector<const model::PhysicalConstant*>> constants_for(const std::vector<std::string>& keys) {
  std::vector<const model::PhysicalConstant*> out;
  if (keys.empty()) {
    for (const auto& constant : model::physical_constants()) out.push_back(&constant);
    return out;
  }
  for (const auto& key : keys) {
    const model::PhysicalConstant* constant = model::find_physical_constant(key);
    if (!constant) {
      std::string known;
      for (const auto& c : model::physical_constants())
        known += (known.empty() ? "" : ", ") + std::string(c.key);
      return make_error(ErrorCode::invalid_input,
                        fmt::format("--fit: unknown constant '{}' (calibrate fits: {})", key, known));
    }
    if (std::find(out.begin(), out.end(), constant) != out.end()) {
      return make_error(ErrorCode::invalid_input, fmt::format("--fit: '{}' given twice", key));
    }
    out.push_back(constant);
  }
  return out;
}

}  // namespace

model::ClusterSpec cluster_for_run(const PreparedRun& run, const model::ClusterSpec& base) {
  model::ClusterSpec cluster = base;
  cluster.nodes = run.source.cluster.nodes;
  return cluster;
}

bool CalibrationFit::accepted() const {
  return refusal().empty();
}

std::string CalibrationFit::refusal() const {
  std::string why;
  for (const auto& c : constants) {
    if (!c.constrained || c.in_range) continue;
    why += fmt::format(
        "{}{} fitted {:.4g}, outside [{:.4g}, {:.4g}] ({}): the runs ask for a machine that "
        "does not exist, so the model is missing a mechanism, not a constant",
        why.empty() ? "" : "; ", c.constant->key, c.after, c.constant->min, c.constant->max,
        c.constant->meaning);
  }
  return why;
}

Result<CalibrationFit> fit_constants(const std::vector<const PreparedRun*>& all,
                                     const model::ClusterSpec& base, const std::vector<std::string>& keys,
                                     int threads) {
  LAGOM_TRY(auto constants, constants_for(keys));
  // The runs the model answers on the base cluster are the ones fitted.
  std::vector<model::ClusterSpec> clusters;
  for (const PreparedRun* run : all) clusters.push_back(cluster_for_run(*run, base));
  const std::vector<ValidatedRun> initial = simulate_all(all, clusters, threads);
  std::vector<const PreparedRun*> runs;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (initial[i].failure.empty()) runs.push_back(all[i]);
  }
  if (runs.empty())
    return make_error(ErrorCode::invalid_input, "calibrate: no run simulates on this cluster");

  CalibrationFit fit;
  fit.before = stats_of(initial);
  Problem problem{runs, base, constants, std::max(1, threads)};
  const auto k = static_cast<Eigen::Index>(constants.size());
  const auto n = static_cast<Eigen::Index>(runs.size());
  Eigen::VectorXd u(k);
  for (Eigen::Index j = 0; j < k; ++j) {
    const double value = constants[static_cast<std::size_t>(j)]->get(base);
    if (!(value > 0)) {
      return make_error(
          ErrorCode::invalid_input,
          fmt::format("calibrate: {} is {} on this cluster; only positive constants can be fitted",
                      constants[static_cast<std::size_t>(j)]->key, value));
    }
    u(j) = std::log(value);
  }
  auto r0 = problem.residuals(u);
  if (!r0) return make_error(ErrorCode::invalid_input, "calibrate: the runs do not simulate on this cluster");
  Eigen::VectorXd r = *r0;
  double cost = r.squaredNorm();
  double lambda = 1e-3;
  Eigen::MatrixXd J(n, k);
  std::vector<bool> constrained(static_cast<std::size_t>(k), true);
  // JᵀJ with every held (unconstrained) constant decoupled: no row or column couples it to the others.
  auto normal_matrix = [&] {
    Eigen::MatrixXd A = J.transpose() * J;
    for (Eigen::Index j = 0; j < k; ++j) {
      if (constrained[static_cast<std::size_t>(j)]) continue;
      A.row(j).setZero();
      A.col(j).setZero();
      A(j, j) = 1;
    }
    return A;
  };
  for (int iteration = 0; iteration < k_max_iterations; ++iteration) {
    for (Eigen::Index j = 0; j < k; ++j) {
      Eigen::VectorXd probe = u;
      probe(j) += k_difference_step;
      auto rj = problem.residuals(probe);
      J.col(j) = rj ? Eigen::VectorXd((*rj - r) / k_difference_step) : Eigen::VectorXd::Zero(n);
      constrained[static_cast<std::size_t>(j)] = J.col(j).norm() > k_unconstrained;
    }
    if (std::none_of(constrained.begin(), constrained.end(), [](bool c) { return c; })) break;
    Eigen::MatrixXd A = normal_matrix();
    const Eigen::VectorXd g = J.transpose() * r;
    bool improved = false;
    double previous = cost;
    while (lambda < 1e10) {
      Eigen::MatrixXd damped = A;
      for (Eigen::Index j = 0; j < k; ++j) damped(j, j) += lambda * std::max(A(j, j), 1e-12);
      Eigen::VectorXd step = damped.ldlt().solve(-g);
      for (Eigen::Index j = 0; j < k; ++j) {
        if (!constrained[static_cast<std::size_t>(j)]) step(j) = 0;
      }
      const double longest = step.cwiseAbs().maxCoeff();
      if (longest > k_max_step) step *= k_max_step / longest;
      auto trial = problem.residuals(u + step);
      if (trial && trial->squaredNorm() < cost) {
        u += step;
        r = *trial;
        cost = r.squaredNorm();
        lambda = std::max(lambda / 3.0, 1e-9);
        improved = true;
        break;
      }
      lambda *= 4.0;
    }
    if (!improved || previous - cost <= k_tolerance * std::max(previous, 1e-300)) break;
  }

  // Standard errors from the Jacobian at the optimum: cov(ln v) = σ² (JᵀJ)⁻¹, σ² = cost / (n − k).
  const Eigen::MatrixXd A = normal_matrix();
  const double dof = static_cast<double>(std::max<Eigen::Index>(n - k, 1));
  const Eigen::MatrixXd covariance = (cost / dof) * A.inverse();
  fit.cluster = problem.with(u);
  for (Eigen::Index j = 0; j < k; ++j) {
    const auto* constant = constants[static_cast<std::size_t>(j)];
    FittedConstant c;
    c.constant = constant;
    c.before = constant->get(base);
    c.constrained = constrained[static_cast<std::size_t>(j)];
    c.after = c.constrained ? std::exp(u(j)) : c.before;
    c.relative_stderr = c.constrained ? std::sqrt(std::max(covariance(j, j), 0.0)) : 0.0;
    c.in_range = c.after >= constant->min && c.after <= constant->max;
    if (!c.constrained) constant->set(fit.cluster, c.before);
    fit.constants.push_back(c);
  }
  clusters.clear();
  for (const PreparedRun* run : all) clusters.push_back(cluster_for_run(*run, fit.cluster));
  fit.runs_after = simulate_all(all, clusters, threads);
  fit.after = stats_of(fit.runs_after);
  fit.evaluations = problem.evaluations + 2;
  return fit;
}

Result<std::vector<CrossValidationFold>> cross_validate_by_model(const std::vector<const PreparedRun*>& runs,
                                                                 const model::ClusterSpec& base,
                                                                 const std::vector<std::string>& keys,
                                                                 int threads, Progress* progress) {
  std::map<std::string, std::vector<const PreparedRun*>> by_model;
  for (const PreparedRun* run : runs) by_model[run->report.model].push_back(run);
  if (by_model.size() < 2) {
    return make_error(ErrorCode::invalid_input,
                      "calibrate: leaving one model out needs runs of at least two models");
  }
  std::vector<CrossValidationFold> folds;
  for (const auto& [name, held] : by_model) {
    std::vector<const PreparedRun*> train;
    for (const PreparedRun* run : runs) {
      if (run->report.model != name) train.push_back(run);
    }
    CrossValidationFold fold;
    fold.left_out = name;
    LAGOM_TRY(fold.fit, fit_constants(train, base, keys, threads));
    std::vector<model::ClusterSpec> clusters;
    for (const PreparedRun* run : held) clusters.push_back(cluster_for_run(*run, fold.fit.cluster));
    fold.held_out = stats_of(simulate_all(held, clusters, threads));
    folds.push_back(std::move(fold));
    if (progress != nullptr) progress->step(static_cast<long>(folds.size()), name + " left out");
  }
  return folds;
}

Result<CalibrationReport> calibrate_runs(const std::vector<std::string>& files,
                                         const model::ClusterSpec& base, const std::vector<std::string>& keys,
                                         bool leave_one_model_out, int threads, Progress& progress) {
  std::vector<PreparedRun> prepared;
  progress.begin(fmt::format("calibrate: reading {} runs file(s)", files.size()),
                 static_cast<long>(files.size()));
  for (std::size_t i = 0; i < files.size(); ++i) {
    LAGOM_TRY(const RunsTable table, read_runs_table(files[i]));
    LAGOM_TRY(auto more, prepare_runs(table));
    prepared.insert(prepared.end(), std::make_move_iterator(more.begin()),
                    std::make_move_iterator(more.end()));
    progress.step(static_cast<long>(i) + 1, files[i]);
  }
  progress.end();
  // The runs measured on this cluster are the ones fitted; a run of another cluster says nothing about it.
  std::vector<const PreparedRun*> runs;
  for (const auto& run : prepared) {
    if (run.source.cluster.name == base.name) runs.push_back(&run);
  }
  CalibrationReport report;
  report.cluster = base.name;
  report.runs = runs.size();
  report.other_clusters = prepared.size() - runs.size();
  if (runs.empty()) {
    return make_error(ErrorCode::invalid_input,
                      fmt::format("calibrate: no run of cluster '{}' in the runs file(s)", base.name));
  }
  progress.begin(
      fmt::format("calibrate: fitting {} on {} runs of {}",
                  keys.empty() ? std::string("every constant") : fmt::format("{}", fmt::join(keys, ", ")),
                  runs.size(), base.name),
      0);
  LAGOM_TRY(report.fit, fit_constants(runs, base, keys, threads));
  progress.end();
  if (leave_one_model_out) {
    progress.begin("calibrate: leave one model out (one fit per model)", 0);
    LAGOM_TRY(report.folds, cross_validate_by_model(runs, base, keys, threads, &progress));
    progress.end();
  }
  double cv_abs = 0, cv_signed = 0;
  for (const auto& fold : report.folds) {
    cv_abs += fold.held_out.mape_pct * fold.held_out.runs;
    cv_signed += fold.held_out.mean_signed_pct * fold.held_out.runs;
    report.cv_runs += fold.held_out.runs;
  }
  report.cv_mape_pct = report.cv_runs > 0 ? cv_abs / report.cv_runs : 0.0;
  report.cv_bias_pct = report.cv_runs > 0 ? cv_signed / report.cv_runs : 0.0;
  return report;
}

model::ClusterSpec calibrated_cluster(const CalibrationReport& report, const model::ClusterSpec& base) {
  const CalibrationFit& fit = report.fit;
  model::ClusterSpec out = fit.cluster;
  out.nodes = base.nodes;
  std::string moved;
  for (const auto& c : fit.constants) {
    if (c.constrained)
      moved += fmt::format("{}{} {:.4g}", moved.empty() ? "" : ", ", c.constant->key, c.after);
  }
  out.description = fmt::format("{}{}calibrated by lagom calibrate on {} runs ({}; MAPE {:.2f}% -> {:.2f}%)",
                                base.description, base.description.empty() ? "" : "; ", fit.after.runs, moved,
                                fit.before.mape_pct, fit.after.mape_pct);
  return out;
}

}  // namespace lagom::validate
