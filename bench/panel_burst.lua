-- A panel participant for wrk: one wrk process (one thread, one connection) per person,
-- from the panel's link to the completion code, as a browser without JavaScript walks it
-- (forms posted, redirects followed):
--
--   entry        GET /join/<slug>/?PROLIFIC_PID=..  302, then the consent page
--   consent      POST step=consent                 302, then the characters page
--   characters   POST step=characters              302, then the instructions
--   first item   GET /annotate/                    302, then the rating page
--   judgment     POST the rating form              302 (to /annotate/)
--   next item    GET /annotate/                    302, then the rating page
--   completion   GET /annotate/                    302, then /join/<slug>/done/ with the code
--   static files the page's /static/ files the participant has not fetched yet (a
--                browser's cache), after each page that names new ones
--
-- bench/panel_burst.py starts each participant's wrk at their arrival: wrk opens its
-- connections when it starts, and a connection opened long before its first request
-- would hold one of gunicorn's threads while it waits for data (gthread gives a new
-- connection 5 s), which a browser arriving does not. It sets BURST_HOST, BURST_SLUG,
-- BURST_RUN (prefix of the panel ids), BURST_ID (the participant's number),
-- BURST_STUDY_ID, BURST_THINK_MS (mean pause before each form post and before the first
-- item; 0: none), BURST_SEED and BURST_LOG, the file each participant appends its lines
-- to:
--
--   STEP id step ms requests   a step done: its latency (first request to the page that
--                              ends it, redirects included, pauses excluded)
--   ERROR id step status text  an answer the step does not expect; the step is tried
--                              again from its first request after 1 s, at most 3 times
--   DONE id code ms            the completion page with its code; ms since arrival
--   GAVEUP id step             three failures of one step
--
-- and done() prints `RESULT {json}`: requests per step and wrk's socket errors. wrk's own
-- timeout count is left out: it counts every connection idle longer than --timeout,
-- which a participant pausing is.
--
-- wrk hands response() one value per header name: of two Set-Cookie headers in one
-- answer the script sees the last. The panel's link answers with two (the CSRF cookie
-- rotated at login, then the session): the session is kept, and the first form page
-- sets a CSRF cookie again for the participant who has none (one secret drawn more).

local ffi = require("ffi")
ffi.cdef[[
  typedef struct { long tv_sec; long tv_nsec; } burst_timespec;
  int clock_gettime(int clock, burst_timespec *now);
]]
local CLOCK_MONOTONIC = 1
local timespec = ffi.new("burst_timespec")

local function now_ms()
  ffi.C.clock_gettime(CLOCK_MONOTONIC, timespec)
  return tonumber(timespec.tv_sec) * 1000 + tonumber(timespec.tv_nsec) / 1e6
end

local threads = {}

function setup(thread)
  threads[#threads + 1] = thread
end

local ATTEMPTS = 3
local REDIRECTS = 5

local slug, origin, think_ms, log
local cookies = {}
local fetched = {}       -- static files already fetched (the browser's cache)
local waiting = 0        -- ms to wait before the next request
local step, first, pending, started, requests, redirects, attempts
local after_statics      -- what comes once the static files are fetched
local statics = {}
local csrf, characters, arrived = nil, {}, nil
local finished = false
-- A global, so that done() can read it from each thread.
sent = {}

local function record(line)
  log:write(line, "\n")
  log:flush()
end

local function excerpt(body)
  return ((body or ""):sub(1, 300):gsub("%s+", " "))
end

local function within_site(location)
  return (location or ""):gsub("^https?://[^/]+", "")
end

local function begin(name, method, path, body, pause)
  step, attempts = name, 0
  first = {method = method, path = path, body = body}
  pending, started, requests, redirects = first, nil, 0, 0
  waiting = pause or 0
end

local function think()
  if think_ms <= 0 then return 0 end
  -- Reading and answering take between half and one and a half times the mean.
  return math.floor(think_ms * (0.5 + math.random()))
end

local function stop()
  finished = true
  waiting = 3600 * 1000
  wrk.thread:stop()
end

local function fail(status, body)
  record(string.format("ERROR %d %s %d %s", id, step, status, excerpt(body)))
  attempts = attempts + 1
  if attempts >= ATTEMPTS then
    record(string.format("GAVEUP %d %s", id, step))
    stop()
    return
  end
  pending, started, requests, redirects = first, nil, 0, 0
  waiting = 1000
end

local function step_done()
  record(string.format("STEP %d %s %.1f %d", id, step, now_ms() - started, requests))
end

local function follow(status, location)
  redirects = redirects + 1
  if redirects > REDIRECTS then return fail(status, "too many redirects: " .. location) end
  pending = {method = "GET", path = within_site(location)}
end

-- After a page: its static files the participant has not fetched yet, then `next`.
local function then_statics(body, next)
  statics = {}
  for _, pattern in ipairs({'href="(/static/[^"]+)"', 'src="(/static/[^"]+)"'}) do
    for path in body:gmatch(pattern) do
      if not fetched[path] then
        fetched[path] = true
        statics[#statics + 1] = path
      end
    end
  end
  if #statics == 0 then return next() end
  after_statics = next
  begin("static files", "GET", table.remove(statics, 1))
end

local function form_token(body)
  return body:match('name="csrfmiddlewaretoken" value="([^"]+)"')
end

local function pick(values, k)
  local chosen, left = {}, {}
  for i, v in ipairs(values) do left[i] = v end
  for _ = 1, math.min(k, #left) do
    chosen[#chosen + 1] = table.remove(left, math.random(#left))
  end
  return chosen
end

-- The rating form as a browser posts it: every radio group answered at random, an empty
-- comment, the CSRF token; read from the page, so that any item kind posts validly.
local function rating_post(body)
  local action, rest = body:match('action="(/annotate/[%w_%-]+/)" class="rating%-form"()')
  if not action then return nil end
  local form = body:sub(rest, (body:find("</form>", rest, true) or #body))
  local groups, order = {}, {}
  for name, value in form:gmatch('<input type="radio" name="([^"]+)" value="([^"]+)"') do
    if not groups[name] then
      groups[name] = {}
      order[#order + 1] = name
    end
    table.insert(groups[name], value)
  end
  local token = form_token(form)
  if not token or #order == 0 then return nil end
  local fields = {"csrfmiddlewaretoken=" .. token}
  for _, name in ipairs(order) do
    local values = groups[name]
    fields[#fields + 1] = name .. "=" .. values[math.random(#values)]
  end
  fields[#fields + 1] = "comment="
  return action, table.concat(fields, "&")
end

local start_path, done_path

local function to_first_item()
  begin("first item", "GET", "/annotate/", nil, think())
end

local handlers = {}

handlers["entry"] = function(status, location, body)
  if status == 302 and within_site(location) == start_path then return follow(status, location) end
  if status == 200 and body:find('data-testid="panel-consent"', 1, true) then
    csrf = form_token(body)
    step_done()
    return then_statics(body, function()
      begin("consent", "POST", start_path,
        "csrfmiddlewaretoken=" .. csrf .. "&step=consent&agree=yes", think())
    end)
  end
  fail(status, body)
end

handlers["consent"] = function(status, location, body)
  if status == 302 and within_site(location) == start_path then return follow(status, location) end
  if status == 200 and body:find('data-testid="panel-characters"', 1, true) then
    csrf = form_token(body)
    characters = {}
    for pk in body:gmatch('name="characters" value="(%d+)"') do
      characters[#characters + 1] = pk
    end
    step_done()
    -- Each participant knows one to three of the study's characters.
    local fields = {"csrfmiddlewaretoken=" .. csrf, "step=characters"}
    for _, pk in ipairs(pick(characters, math.random(3))) do
      fields[#fields + 1] = "characters=" .. pk
    end
    local post = table.concat(fields, "&")
    return then_statics(body, function()
      begin("characters", "POST", start_path, post, think())
    end)
  end
  fail(status, body)
end

handlers["characters"] = function(status, location, body)
  if status == 302 and within_site(location) == start_path then return follow(status, location) end
  if status == 200 and body:find('data-testid="panel-begin"', 1, true) then
    step_done()
    return then_statics(body, to_first_item)
  end
  fail(status, body)
end

local function item_or_end(status, location, body)
  local path = within_site(location)
  if status == 302 and path:match("^/annotate/[%w_%-]+/$") then return follow(status, location) end
  if status == 302 and path == done_path then
    -- The batch is over: this request begins the completion step.
    sent[step] = sent[step] - requests
    step = "completion"
    sent[step] = (sent[step] or 0) + requests
    return follow(status, location)
  end
  if status == 200 then
    local action, post = rating_post(body)
    if action then
      step_done()
      return then_statics(body, function()
        begin("judgment", "POST", action, post, think())
      end)
    end
  end
  fail(status, body)
end

handlers["first item"] = item_or_end
handlers["next item"] = item_or_end

handlers["judgment"] = function(status, location, body)
  if status == 302 and within_site(location) == "/annotate/" then
    step_done()
    -- The browser follows the redirect at once.
    return begin("next item", "GET", "/annotate/")
  end
  fail(status, body)
end

handlers["completion"] = function(status, location, body)
  local code = status == 200
    and body:match('data%-testid="panel%-code">.-<strong>([^<]+)</strong>')
  if code then
    step_done()
    record(string.format("DONE %d %s %.1f", id, code, now_ms() - arrived))
    return stop()
  end
  fail(status, body)
end

handlers["static files"] = function(status, location, body)
  if status ~= 200 and status ~= 304 then return fail(status, body) end
  if #statics > 0 then
    pending = {method = "GET", path = table.remove(statics, 1)}
    return
  end
  step_done()
  after_statics()
end

function init(args)
  id = tonumber(os.getenv("BURST_ID"))
  slug = os.getenv("BURST_SLUG")
  start_path = "/join/" .. slug .. "/start/"
  done_path = "/join/" .. slug .. "/done/"
  origin = "https://" .. os.getenv("BURST_HOST")
  think_ms = tonumber(os.getenv("BURST_THINK_MS") or "0")
  -- A generator of each participant's own: with one seed for all, every participant
  -- would draw the same characters, ratings and pauses.
  math.randomseed(tonumber(os.getenv("BURST_SEED") or "1") * 100003 + id)
  log = io.open(os.getenv("BURST_LOG"), "a")
  local pid = string.format("%s%05d", os.getenv("BURST_RUN"), id)
  begin("entry", "GET", string.format(
    "/join/%s/?PROLIFIC_PID=%s&STUDY_ID=%s&SESSION_ID=s%s",
    slug, pid, os.getenv("BURST_STUDY_ID"), pid))
end

function delay()
  local ms = waiting
  waiting = 0
  return ms
end

local verified = false

function request()
  -- wrk asks for the first request once before sending anything, to check it: that
  -- call is neither sent nor timed.
  if verified then
    local now = now_ms()
    started = started or now
    arrived = arrived or now
    requests = requests + 1
    sent[step] = (sent[step] or 0) + 1
  end
  verified = true
  local headers = {["X-Forwarded-Proto"] = "https"}
  local jar = {}
  for name, value in pairs(cookies) do jar[#jar + 1] = name .. "=" .. value end
  if #jar > 0 then headers["Cookie"] = table.concat(jar, "; ") end
  if pending.method == "POST" then
    headers["Origin"] = origin
    headers["Content-Type"] = "application/x-www-form-urlencoded"
  end
  return wrk.format(pending.method, pending.path, headers, pending.body)
end

local function keep_cookie(header)
  local name, value = (header or ""):match("^%s*([^=;%s]+)=([^;]*)")
  if not name then return end
  if value == "" or value == '""' or header:lower():find("max-age=0", 1, true) then
    cookies[name] = nil
  else
    cookies[name] = value
  end
end

function response(status, headers, body)
  keep_cookie(headers["Set-Cookie"])
  if finished then return end
  handlers[step](status, headers["Location"], body or "")
end

function done(summary, latency, requests_total)
  local steps = {}
  for _, thread in ipairs(threads) do
    for name, n in pairs(thread:get("sent") or {}) do
      steps[name] = (steps[name] or 0) + n
    end
  end
  local parts = {}
  for name, n in pairs(steps) do parts[#parts + 1] = string.format('"%s": %d', name, n) end
  io.write(string.format(
    'RESULT {"requests": %d, "seconds": %.3f, "connect": %d, "read": %d, "write": %d, ' ..
    '"status": %d, "sent": {%s}}\n',
    summary.requests, summary.duration / 1e6, summary.errors.connect, summary.errors.read,
    summary.errors.write, summary.errors.status, table.concat(parts, ", ")))
end
