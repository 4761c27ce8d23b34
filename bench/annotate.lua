-- The annotator's loop for wrk: one thread, one connection, one annotator. Each request
-- submits the current item and receives the next one (htmx fragment); the token of the
-- next item is read from the answer. After anything but a 200 the annotator asks
-- /annotate/ for its item again (a 302 whose Location carries the token).
--
-- bench/load.py writes the accounts file (LOAD_ACCOUNTS: one line per annotator:
-- "session csrf token") and sets LOAD_USERS (the connections), LOAD_THINK_MS (0: closed
-- loop) and LOAD_HOST. Connection i starts as the file's annotator i. When told there is
-- nothing left for them to rate (in a study with just the annotators it needs, each may
-- rate only about one item per scenario), that annotator is done and leaves: the
-- connection goes on as annotator i + LOAD_USERS, then i + 2 LOAD_USERS, and so on,
-- as a study's annotators finish and others start. done() lists the annotators who
-- finished, so that later levels do not use them again.
--
-- What is counted: a cycle is a submission answered 200 with the next item. Its latency
-- is timed here, from the moment wrk builds the request (after the think time) to its
-- answer, and the percentiles are over these cycles only: wrk's own histogram would also
-- count the GET /annotate/ that starts each annotator and every failed submission. The
-- think time comes only before a submission (nobody rates the start page), and each
-- annotator draws it from a generator seeded with their own number: with the default
-- seed every thread draws the same pauses, and the whole crowd submits in lockstep.

local ffi = require("ffi")
ffi.cdef[[
  typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
  int clock_gettime(int clock, bench_timespec *now);
]]
local CLOCK_MONOTONIC = 1
local timespec = ffi.new("bench_timespec")

local function now_ms()
  ffi.C.clock_gettime(CLOCK_MONOTONIC, timespec)
  return tonumber(timespec.tv_sec) * 1000 + tonumber(timespec.tv_nsec) / 1e6
end

local accounts = {}
local counter = 0
local threads = {}

local function read_accounts()
  for line in io.lines(os.getenv("LOAD_ACCOUNTS")) do
    local session, csrf, token = line:match("(%S+) (%S+) (%S+)")
    accounts[#accounts + 1] = {session = session, csrf = csrf, token = token}
  end
end

function setup(thread)
  if #accounts == 0 then read_accounts() end
  counter = counter + 1
  thread:set("id", counter)
  threads[#threads + 1] = thread
end

local account, form, headers, think, recovering, sent_at, stride
-- Globals, so that done() can read them from each thread.
submitted, redirected, failed, no_work, current = 0, 0, 0, 0, 0
cycle_ms = {}
finished = ""  -- the annotators who finished here, as " i j k"

local function become(index)
  current = index
  account = accounts[index]
  headers["Cookie"] = "sessionid=" .. account.session .. "; csrftoken=" .. account.csrf
  headers["X-CSRFToken"] = account.csrf
  recovering = account.token == "-"
end

function init(args)
  read_accounts()
  stride = tonumber(os.getenv("LOAD_USERS") or "0")
  think = tonumber(os.getenv("LOAD_THINK_MS") or "0")
  math.randomseed(id * 7919 + os.time())
  local fields = {}
  for metric in (os.getenv("LOAD_METRICS") or ""):gmatch("[^,]+") do
    fields[#fields + 1] = "a-" .. metric .. "=4&b-" .. metric .. "=3"
  end
  form = table.concat(fields, "&") .. "&preference=tie"
  headers = {
    ["X-Forwarded-Proto"] = "https",
    ["Origin"] = "https://" .. os.getenv("LOAD_HOST"),
    ["HX-Request"] = "true",
    ["Content-Type"] = "application/x-www-form-urlencoded",
  }
  become(id)
end

-- Nothing left for this annotator: the next one of this connection starts, if any.
local function next_annotator()
  no_work = no_work + 1
  if stride > 0 and accounts[current + stride] ~= nil then
    finished = finished .. " " .. current
    become(current + stride)
  else
    recovering = true
  end
end

function request()
  sent_at = now_ms()
  if recovering then
    return wrk.format("GET", "/annotate/", {
      ["Cookie"] = headers["Cookie"], ["X-Forwarded-Proto"] = "https",
    })
  end
  return wrk.format("POST", "/annotate/" .. account.token .. "/", headers, form)
end

function delay()
  if think <= 0 or recovering then return 0 end
  -- Reading and rating take between half and one and a half times the mean.
  return math.floor(think * (0.5 + math.random()))
end

-- The page that says there is nothing to rate now: the annotator reached their cap, or
-- every item they may take is done or held by others. The product's answer, not a
-- failure: counted apart, and the next annotator of the connection starts (the last one
-- keeps asking).
local function nothing_to_rate(status, body)
  return status == 200 and body ~= nil and body:find('data-testid="no-work"', 1, true) ~= nil
end

function response(status, response_headers, body)
  if recovering then
    local token = (response_headers["Location"] or ""):match("/annotate/([%w_-]+)/$")
    if status == 302 and token then
      account.token, recovering = token, false
      redirected = redirected + 1
    elseif nothing_to_rate(status, body) then
      next_annotator()
    else
      failed = failed + 1
    end
    return
  end
  local token = status == 200 and body:match('action="/annotate/([%w_-]+)/"')
  if token then
    submitted = submitted + 1
    cycle_ms[submitted] = now_ms() - sent_at
    account.token = token
  elseif nothing_to_rate(status, body) then
    next_annotator()
  else
    failed = failed + 1
    recovering = true
    -- What the first few failures answered, for the log (one line each).
    if failed <= 3 then
      io.write("FAILED " .. status .. " " .. (body or ""):sub(1, 2000):gsub("%s+", " ") .. "\n")
    end
  end
end

local function percentile(sorted, p)
  if #sorted == 0 then return 0 end
  return sorted[math.max(1, math.ceil(p / 100 * #sorted))]
end

function done(summary, latency, requests)
  local ok, bad, redirects, idle, cycles, done_here = 0, 0, 0, 0, {}, {}
  for _, thread in ipairs(threads) do
    for index in (thread:get("finished") or ""):gmatch("%d+") do
      done_here[#done_here + 1] = index
    end
    ok = ok + (thread:get("submitted") or 0)
    bad = bad + (thread:get("failed") or 0)
    redirects = redirects + (thread:get("redirected") or 0)
    idle = idle + (thread:get("no_work") or 0)
    for _, ms in ipairs(thread:get("cycle_ms") or {}) do cycles[#cycles + 1] = ms end
  end
  table.sort(cycles)
  io.write(string.format(
    'RESULT {"requests": %d, "seconds": %.3f, "submitted": %d, "failed": %d, ' ..
    '"recovered": %d, "no_work": %d, "socket_errors": %d, "p50": %.1f, "p95": %.1f, ' ..
    '"p99": %.1f, ' ..
    '"non_2xx": %d, "wrk_p50": %.1f, "wrk_p95": %.1f, "finished": [%s]}\n',
    summary.requests, summary.duration / 1e6, ok, bad, redirects, idle,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    percentile(cycles, 50), percentile(cycles, 95), percentile(cycles, 99),
    summary.errors.status, latency:percentile(50) / 1000, latency:percentile(95) / 1000,
    table.concat(done_here, ", ")))
end
