-- post.lua: POST /api/v1/nodepools into cluster $CID, a new pool name on
-- every request (thread id + random prefix + counter), in the guide's shape.
local cid = os.getenv("CID")
local n = 0
local nthreads = 0

function setup(thread)
  nthreads = nthreads + 1
  thread:set("tid", nthreads)
end

function init(args)
  math.randomseed(os.time() * 1000 + (tid or 0))
  prefix = string.format("np-%d-%06d-%d", tid or 0, math.random(0, 999999), os.time())
end

wrk.method = "POST"
wrk.path = "/api/v1/nodepools"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-User-Email"] = "bench@example.com"

function request()
  n = n + 1
  local body = string.format(
    '{"name":"%s-%d","cluster_id":"%s","spec":{"platform":{"type":"gcp","gcp":{"machineType":"n1-standard-4"}},"nodeCount":3}}',
    prefix, n, cid)
  return wrk.format(nil, nil, nil, body)
end
