-- put.lua: blind PUT /api/v1/nodepools/$NP (no resource_version) that
-- changes spec.nodeCount on every request. The count cycles 1..1000 with a
-- per-thread offset, so a request rarely carries the stored value and every
-- accepted PUT should make exactly one generation.
local np = os.getenv("NP")
local n = 0
local nthreads = 0

function setup(thread)
  nthreads = nthreads + 1
  thread:set("tid", nthreads)
end

wrk.method = "PUT"
wrk.path = "/api/v1/nodepools/" .. np
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-User-Email"] = "bench@example.com"

function request()
  n = n + 1
  local body = string.format(
    '{"spec":{"platform":{"type":"gcp","gcp":{"machineType":"n1-standard-4"}},"nodeCount":%d}}',
    ((n * 7 + (tid or 0) * 500) % 1000) + 1)
  return wrk.format(nil, nil, nil, body)
end
