#!/usr/bin/env bash
# coop, dte, dtr at ratio 0.5 on the eight zoo models: overhead, fragmentation, search latency
cd "$(dirname "$0")/../../.."
for m in "$@"; do for meth in coop dte dtr; do
  python -m planner solve --model $m --ratio 0.5 --method $meth --json 2>/dev/null | python -c "
import json,sys; d=json.load(sys.stdin); s=d['stats']
print(json.dumps({k: d.get(k) for k in ('model','method','ratio','status','overhead','fragmentation','solve_seconds')} | {'search_mean_s': s.get('search_latency_mean_s'), 'search_total_s': s.get('search_latency_total_s'), 'evictions': s.get('evictions'), 'frag_sim': s.get('fragmentation_sim')}))"
done; done
