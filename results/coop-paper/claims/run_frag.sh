#!/usr/bin/env bash
# coop at ratio 0.5: fragmentation sampled before eviction (ours), after it (OneFlow Coop's), and the validator's
cd "$(dirname "$0")/../../.."
for m in "$@"; do
  python -m planner solve --model $m --ratio 0.5 --method coop --json 2>/dev/null | python -c "
import json,sys; d=json.load(sys.stdin); s=d['stats']; f=d['fragmentation'] or {}
print(json.dumps({'model': d['model'], 'status': d['status'], 'overhead': d['overhead'], 'frag_before_eviction': s.get('fragmentation_sim'), 'frag_after_eviction': s.get('fragmentation_after_eviction'), 'frag_eviction_validator': f.get('eviction'), 'frag_range_validator': f.get('range')}))"
done
