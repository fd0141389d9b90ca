#!/usr/bin/env bash
# netns-cluster.sh: a real small cluster on one machine. N network namespaces ("nodes") joined by veth
# links through a bridge in the root namespace, each node's egress shaped with tc tbf, so MPI ranks (one
# per namespace, over TCP) wait on a real link instead of on a core.
#
# Interface (stable: scripts and tests of other modules call it):
#   netns-cluster.sh check                       exit 0 if namespaces can be made here, 77 (and why on
#                                                stderr) if not: not root, no `ip`/`tc`, no permission
#   netns-cluster.sh up   [--nodes N] [--rate R] [--prefix P] [--subnet A.B.C] [--mtu M]
#                                                creates namespaces P1..PN, bridge Pbr, veths Ph<i>/Pn<i>;
#                                                node i gets A.B.C.i/24, the bridge A.B.C.254; every node's
#                                                egress is shaped to R (tc syntax: 1gbit, 100mbit; default
#                                                1gbit; "none" = unshaped). Defaults: N=2, P=lagom, A.B.C=10.213.0,
#                                                M=9000 (jumbo frames, as HPC fabrics use: TCP/IP headers then
#                                                cost <1% of the shaped rate instead of ~5% at 1500)
#   netns-cluster.sh run  [--prefix P] [--np-per-node K] -- PROG [ARGS...]
#                                                mpirun with K ranks (default 1) in each namespace of the
#                                                cluster P, TCP only, over the cluster's subnet; the exit
#                                                status is mpirun's
#   netns-cluster.sh shape [--prefix P] --rate R changes every node's egress rate of a running cluster
#                                                (tc qdisc change: connections stay up, as on a link that
#                                                degrades under a running job)
#   netns-cluster.sh down [--prefix P]           removes everything `up` made (idempotent)
#   netns-cluster.sh status [--prefix P]         prints the nodes, addresses and qdiscs
# Environment passed to ranks: whatever mpirun forwards; add `-x VAR` through LAGOM_NETNS_MPIRUN_ARGS.
# Needs root (CAP_NET_ADMIN + CAP_SYS_ADMIN). Only addresses inside the subnet it creates are used.
# OpenMPI 4.1 notes (docs/profiler.md#a-cluster-on-one-machine-scriptsnetns-clustersh): without PMIX_MCA_ptl_tcp_remote_connections=1 and
# PMIX_MCA_ptl_tcp_if_include=<bridge> the ranks fail in MPI_Init ("OPAL ERROR: Unreachable").
# `netem` is not available here, so latency cannot be added; tbf shapes bandwidth only.
set -euo pipefail

prefix=lagom
nodes=2
rate=1gbit
subnet=10.213.0
np_per_node=1
mtu=9000

die() { echo "netns-cluster: $*" >&2; exit 1; }
state_file() { echo "/run/lagom-netns-${prefix}.env"; }

parse_common() {
  while [ $# -gt 0 ]; do
    case "$1" in
      --prefix) prefix=$2; shift 2 ;;
      --nodes) nodes=$2; shift 2 ;;
      --rate) rate=$2; shift 2 ;;
      --subnet) subnet=$2; shift 2 ;;
      --np-per-node) np_per_node=$2; shift 2 ;;
      --mtu) mtu=$2; shift 2 ;;
      --) shift; rest=("$@"); return ;;
      *) die "unknown argument '$1' (see the header of $0)" ;;
    esac
  done
  rest=()
}

check() {
  if [ "$(id -u)" != 0 ]; then echo "netns-cluster: needs root (network namespaces)" >&2; return 77; fi
  for tool in ip tc mpirun; do
    command -v "$tool" >/dev/null 2>&1 || { echo "netns-cluster: '$tool' not found" >&2; return 77; }
  done
  local probe="lgchk$$"
  if ! ip netns add "$probe" 2>/dev/null; then
    echo "netns-cluster: this machine does not allow network namespaces (ip netns add failed)" >&2
    return 77
  fi
  ip netns del "$probe"
  if ! ip link add "${probe}a" type veth peer name "${probe}b" 2>/dev/null; then
    echo "netns-cluster: this machine does not allow veth links" >&2
    return 77
  fi
  ip link del "${probe}a"
  return 0
}

down() {
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${prefix}[0-9]+$" || true); do
    ip netns del "$ns" 2>/dev/null || true
  done
  for link in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1 | grep -E "^${prefix}(h[0-9]+|br)$" || true); do
    ip link del "$link" 2>/dev/null || true
  done
  rm -f "$(state_file)"
}

up() {
  [ ${#prefix} -le 8 ] || die "--prefix must be at most 8 characters (interface names are at most 15)"
  [[ "$nodes" =~ ^[0-9]+$ ]] && [ "$nodes" -ge 2 ] && [ "$nodes" -le 32 ] || die "--nodes must be 2..32"
  [[ "$subnet" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "--subnet must look like 10.213.0"
  check || exit $?
  down
  local bridge="${prefix}br"
  [[ "$mtu" =~ ^[0-9]+$ ]] || die "--mtu must be a number"
  ip link add "$bridge" type bridge
  ip link set "$bridge" mtu "$mtu"
  ip addr add "${subnet}.254/24" dev "$bridge"
  ip link set "$bridge" up
  for i in $(seq 1 "$nodes"); do
    local ns="${prefix}${i}" host_end="${prefix}h${i}" node_end="${prefix}n${i}"
    ip netns add "$ns"
    ip link add "$host_end" mtu "$mtu" type veth peer name "$node_end" mtu "$mtu"
    ip link set "$node_end" netns "$ns"
    ip link set "$host_end" master "$bridge"
    ip link set "$host_end" up
    ip -n "$ns" addr add "${subnet}.${i}/24" dev "$node_end"
    ip -n "$ns" link set "$node_end" up
    ip -n "$ns" link set lo up
    if [ "$rate" != none ]; then
      ip netns exec "$ns" tc qdisc add dev "$node_end" root tbf rate "$rate" burst 256kb latency 50ms
    fi
  done
  printf 'nodes=%s\nsubnet=%s\nrate=%s\nbridge=%s\n' "$nodes" "$subnet" "$rate" "$bridge" > "$(state_file)"
  echo "netns-cluster: $nodes nodes ${prefix}1..${prefix}${nodes} on ${subnet}.0/24, egress $rate" >&2
}

run() {
  [ -f "$(state_file)" ] || die "no cluster '$prefix' (run: $0 up --prefix $prefix)"
  # shellcheck disable=SC1090
  . "$(state_file)"
  [ ${#rest[@]} -gt 0 ] || die "run: give the program after --"
  local app=()
  for i in $(seq 1 "$nodes"); do
    [ ${#app[@]} -gt 0 ] && app+=(":")
    app+=(-np "$np_per_node" ip netns exec "${prefix}${i}" "${rest[@]}")
  done
  export PMIX_MCA_ptl_tcp_remote_connections=1 PMIX_MCA_ptl_tcp_if_include="$bridge"
  # shellcheck disable=SC2086
  exec mpirun --allow-run-as-root --oversubscribe --mca btl tcp,self --mca btl_tcp_if_include "${subnet}.0/24" \
    --mca oob_tcp_if_include "$bridge" ${LAGOM_NETNS_MPIRUN_ARGS:-} "${app[@]}"
}

shape() {
  [ -f "$(state_file)" ] || die "no cluster '$prefix' (run: $0 up --prefix $prefix)"
  local wanted=$rate
  # shellcheck disable=SC1090
  . "$(state_file)"
  [ "$rate" != none ] || die "shape: the cluster was made unshaped (--rate none)"
  [ "$wanted" != none ] || die "shape: give a rate (tc syntax: 333mbit)"
  for i in $(seq 1 "$nodes"); do
    ip netns exec "${prefix}${i}" tc qdisc change dev "${prefix}n${i}" root tbf rate "$wanted" burst 256kb latency 50ms
  done
  sed -i "s/^rate=.*/rate=$wanted/" "$(state_file)"
  echo "netns-cluster: $nodes nodes ${prefix}1..${prefix}${nodes}: egress now $wanted" >&2
}

status() {
  [ -f "$(state_file)" ] || { echo "netns-cluster: no cluster '$prefix'"; return 0; }
  cat "$(state_file)"
  . "$(state_file)"
  for i in $(seq 1 "$nodes"); do
    echo "# ${prefix}${i}"
    ip -n "${prefix}${i}" -br addr show "${prefix}n${i}" || true
    ip netns exec "${prefix}${i}" tc qdisc show dev "${prefix}n${i}" || true
  done
}

command=${1:-}
[ -n "$command" ] || die "usage: $0 check|up|run|shape|down|status [options] (see the header)"
shift
parse_common "$@"
case "$command" in
  check) check ;;
  up) up ;;
  down) down ;;
  run) run ;;
  shape) shape ;;
  status) status ;;
  *) die "unknown command '$command' (check, up, run, shape, down, status)" ;;
esac
