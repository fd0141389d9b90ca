// The task graph of one iteration, emitted from its plan (stage_plan.h): per stage the compute stream's
// passes in schedule order (schedule.h), the gradient, parameter and embedding collectives on their
// streams after the tasks the plan names, the optimizer step, and the pipeline transfers between stages.
// Every task's work is the plan's (a pass's span total, count × an op class's price); the emitter adds
// the order and the dependencies. Internal to simulator/.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "simulator/engine.h"
#include "simulator/op_classes.h"
#include "simulator/pass_plan.h"
#include "simulator/simulator.h"
#include "simulator/stage_plan.h"

namespace lagom::simulator {

// What a task is, for trace names (trace.h).
enum class TaskWhat : std::uint8_t {
  forward,
  backward,
  optimizer,
  transfer_forward,
  transfer_backward,
  dp,
  fsdp_gather,
  embedding
};

struct TaskInfo {
  TaskWhat what = TaskWhat::forward;
  StreamKind stream = StreamKind::compute;
  int chunk = 0, micro_batch = 0, layer_begin = 0, layer_end = 0;
  int op_class = -1;  // communication tasks
  double count = 1;   // communication tasks: calls
  int pass = -1;      // compute passes: Graph::passes index
  int peer = -1;      // the second stage a task occupies, or −1
};

struct Graph {
  Engine engine;
  std::vector<TaskInfo> info;    // per task, indexed by Task::label
  std::vector<PassPlan> passes;  // the compute passes' plans (trace segments, op class calls)
};

// Emits the graph of `plan` into `graph` (empty), counting every call in `classes` (the table the plan was
// made with). `assignment` gives the issue priority.
void emit_graph(const IterationPlan& plan, const model::Strategy& strategy, const CommAssignment& assignment,
                bool keep_segments, OpClassTable& classes, Graph& graph);

}  // namespace lagom::simulator
