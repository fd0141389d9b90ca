#include <catch2/catch.hpp>

#include "simulator/engine.h"

using lagom::simulator::Engine;
using lagom::simulator::Task;
using lagom::simulator::TaskKind;

TEST_CASE("tasks on one stream run one after another in the order they were added", "[simulator]") {
  Engine engine;
  const int stream = engine.add_stream(0, true);
  const int a = engine.add_task({stream, -1, TaskKind::compute, 10});
  const int b = engine.add_task({stream, -1, TaskKind::compute, 5});
  REQUIRE(engine.run().ok());
  CHECK(engine.start_us(a) == 0);
  CHECK(engine.end_us(a) == 10);
  CHECK(engine.start_us(b) == 10);
  CHECK(engine.makespan_us() == 15);
  CHECK(engine.totals(0).compute_us == 15);
  CHECK(engine.totals(0).bubble_us == 0);
}

TEST_CASE("a dependency delays a task until its predecessor on another stage finishes", "[simulator]") {
  Engine engine;
  const int s0 = engine.add_stream(0, true);
  const int s1 = engine.add_stream(1, true);
  const int a = engine.add_task({s0, -1, TaskKind::compute, 7});
  const int b = engine.add_task({s1, -1, TaskKind::compute, 3});
  engine.add_dependency(a, b);
  REQUIRE(engine.run().ok());
  CHECK(engine.start_us(b) == 7);
  CHECK(engine.makespan_us() == 10);
  // Stage 1 idles 7 µs with no communication in flight: bubble.
  CHECK(engine.totals(1).bubble_us == 7);
  CHECK(engine.totals(0).bubble_us == 3);
}

TEST_CASE("overlapping compute and communication progress at their contended rates", "[simulator]") {
  // Compute 100 µs and a collective of 100 µs start together; beside each other compute runs 1.5× slower
  // and the collective 1.2× slower. The collective ends at 120 µs, having let compute do 120/1.5 = 80 µs of
  // work; the last 20 µs of compute then run alone: end at 140 µs.
  Engine engine;
  const int compute = engine.add_stream(0, true);
  const int comm = engine.add_stream(0, false);
  const int c = engine.add_task({compute, -1, TaskKind::compute, 100});
  Task collective{comm, -1, TaskKind::comm, 100};
  collective.compute_slowdown = 1.5;
  collective.comm_slowdown = 1.2;
  const int m = engine.add_task(collective);
  REQUIRE(engine.run().ok());
  CHECK(engine.end_us(m) == Approx(120).epsilon(1e-12));
  CHECK(engine.end_us(c) == Approx(140).epsilon(1e-12));
  CHECK(engine.totals(0).compute_us == Approx(140).epsilon(1e-12));
  CHECK(engine.totals(0).exposed_comm_us == 0);
}

TEST_CASE("blocking communication inside a compute task is neither slowed nor counted as compute",
          "[simulator]") {
  // A task of 100 µs of which 40 are blocking communication; a collective beside it slows kernels 2×:
  // the task takes 60·2 + 40 = 160 µs while the collective (1000 µs) runs.
  Engine engine;
  const int compute = engine.add_stream(0, true);
  const int comm = engine.add_stream(0, false);
  Task task{compute, -1, TaskKind::compute, 100};
  task.blocking_fraction = 0.4;
  const int c = engine.add_task(task);
  Task collective{comm, -1, TaskKind::comm, 1000};
  collective.compute_slowdown = 2.0;
  engine.add_task(collective);
  REQUIRE(engine.run().ok());
  CHECK(engine.end_us(c) == Approx(160).epsilon(1e-12));
  CHECK(engine.totals(0).compute_us == Approx(120).epsilon(1e-12));
  // 40 µs blocking inside the task, then 840 µs idle while the collective finishes.
  CHECK(engine.totals(0).exposed_comm_us == Approx(880).epsilon(1e-12));
  const auto& t = engine.totals(0);
  CHECK(t.compute_us + t.optimizer_us + t.exposed_comm_us + t.bubble_us ==
        Approx(engine.makespan_us()).epsilon(1e-12));
}

TEST_CASE("a dependency cycle is reported, not simulated forever", "[simulator]") {
  Engine engine;
  const int s0 = engine.add_stream(0, true);
  const int s1 = engine.add_stream(1, true);
  const int a = engine.add_task({s0, -1, TaskKind::compute, 1});
  const int b = engine.add_task({s1, -1, TaskKind::compute, 1});
  engine.add_dependency(a, b);
  engine.add_dependency(b, a);
  const auto status = engine.run();
  REQUIRE_FALSE(status.ok());
  CHECK(status.error().message == "simulation: 2 of 2 tasks could never start (a dependency cycle)");
}

TEST_CASE("collectives sharing a link split it; on different links they do not slow each other",
          "[simulator]") {
  // Collectives of 60 and 100 µs on stage 0 start together on the same link: each runs at half rate until
  // the shorter one ends at 120 µs (60 of work at 1/2); the other has 40 left, alone from there: it ends at
  // 160 µs (= 160 µs of work through one link).
  Engine engine;
  const int a_stream = engine.add_stream(0, false);
  const int b_stream = engine.add_stream(0, false);
  Task a{a_stream, -1, TaskKind::comm, 60};
  a.link = 0;
  Task b{b_stream, -1, TaskKind::comm, 100};
  b.link = 0;
  const int ia = engine.add_task(a);
  const int ib = engine.add_task(b);
  REQUIRE(engine.run().ok());
  CHECK(engine.end_us(ia) == Approx(120).epsilon(1e-12));
  CHECK(engine.end_us(ib) == Approx(160).epsilon(1e-12));
  CHECK(engine.totals(0).exposed_comm_us == Approx(160).epsilon(1e-12));

  Engine apart;
  const int s0 = apart.add_stream(0, false);
  const int s1 = apart.add_stream(0, false);
  Task c{s0, -1, TaskKind::comm, 60};
  c.link = 0;
  Task d{s1, -1, TaskKind::comm, 100};
  d.link = 1;
  const int ic = apart.add_task(c);
  const int id = apart.add_task(d);
  REQUIRE(apart.run().ok());
  CHECK(apart.end_us(ic) == 60);
  CHECK(apart.end_us(id) == 100);
}

TEST_CASE("on a shared link a higher priority runs first and the lower one waits, then resumes",
          "[simulator]") {
  // The low-priority collective (100 µs) starts alone at 0; at 30 µs a high-priority one (50 µs) arrives
  // and takes the link: the low one has 70 µs left, waits from 30 to 80, and ends at 150 µs.
  Engine engine;
  const int compute = engine.add_stream(0, true);
  const int low_stream = engine.add_stream(0, false);
  const int high_stream = engine.add_stream(0, false);
  const int c = engine.add_task({compute, -1, TaskKind::compute, 30});
  Task low{low_stream, -1, TaskKind::comm, 100};
  low.link = 0;
  low.priority = 0;
  Task high{high_stream, -1, TaskKind::comm, 50};
  high.link = 0;
  high.priority = 1;
  const int il = engine.add_task(low);
  const int ih = engine.add_task(high);
  engine.add_dependency(c, ih);
  REQUIRE(engine.run().ok());
  CHECK(engine.start_us(ih) == 30);
  CHECK(engine.end_us(ih) == Approx(80).epsilon(1e-12));
  CHECK(engine.end_us(il) == Approx(150).epsilon(1e-12));
  // The stage's accounting still adds up: 30 compute, then 120 waiting on communication.
  CHECK(engine.totals(0).compute_us + engine.totals(0).exposed_comm_us == Approx(150).epsilon(1e-12));
}

TEST_CASE("the critical path is the longest chain of work alone through streams and dependencies",
          "[simulator]") {
  // Stage 0: a (10) then b (5) on compute; c (20) on a comm stream after a. Stage 1: d (7) after c.
  // Chains: a→b = 15, a→c→d = 37. Contention (c slows b and itself) only makes the run longer.
  Engine engine;
  const int compute0 = engine.add_stream(0, true);
  const int comm0 = engine.add_stream(0, false);
  const int compute1 = engine.add_stream(1, true);
  const int a = engine.add_task({compute0, -1, TaskKind::compute, 10});
  engine.add_task({compute0, -1, TaskKind::compute, 5});
  Task c{comm0, -1, TaskKind::comm, 20};
  c.compute_slowdown = 2;
  c.comm_slowdown = 1.5;
  const int ci = engine.add_task(c);
  const int d = engine.add_task({compute1, -1, TaskKind::compute, 7});
  engine.add_dependency(a, ci);
  engine.add_dependency(ci, d);
  CHECK(engine.critical_path_us() == 37);
  REQUIRE(engine.run().ok());
  CHECK(engine.makespan_us() > 37);
  CHECK(engine.critical_path_us() == 37);  // unchanged by run()
}

TEST_CASE("the critical path of a graph with a cycle is 0", "[simulator]") {
  Engine engine;
  const int s0 = engine.add_stream(0, true);
  const int a = engine.add_task({s0, -1, TaskKind::compute, 1});
  const int b = engine.add_task({s0, -1, TaskKind::compute, 1});
  engine.add_dependency(b, a);  // a waits for b, which is queued behind a
  CHECK(engine.critical_path_us() == 0);
}
