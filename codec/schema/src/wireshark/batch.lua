-- ---- bitlens runtime: message batches (WIRE.md section 3) ---------------------------------------
-- [u16 LE batch length][u8 type][u8 stage][u16 LE body length][body]...: byte-aligned, little-
-- endian bodies read as codec/src/batch/fast.rs (FastReader) and schema/src/batch/interpret.rs read them, with
-- the same fields, errors (byte offset, field name, message) and statuses.
--
-- The reader `B` holds the datagram (B.s, B.len), the position B.pos and the end of the current
-- body B.limit (byte offsets from 0), the tree item (B.tree), the path (B.path) and an element's
-- label (B.idx). A violation raises a BFAIL table {kind, at, field, text}.

local BFAIL = {}

local function braise(kind, at, field, text)
  error(setmetatable({ kind = kind, at = at, field = field, text = text }, BFAIL), 0)
end

-- Adds a field item "name: text [byte B, N bytes, extra]" (a failed one is marked).
local function bput(B, pf, name, at, n, value, text, extra, failed)
  if not B.vis and not failed then
    if value == nil then B.tree:add(pf, B.tvb(at, n)) else B.tree:add(pf, value) end
    return
  end
  local label = label_of(name, text or nil, " [byte " .. at .. ", " .. n .. " bytes" .. (extra or "") .. "]"
    .. (failed and STOP or ""))
  local ti
  if value == nil then
    ti = B.tree:add(pf, B.tvb(at, n))
    ti:set_text(label)
  else
    ti = B.tree:add(pf, B.tvb(at, n), value, label)
  end
  if failed then B.fail_item = ti end
end

-- n bytes, consumed: their offset. Past the body's end: a failed field, then past_end.
local function btake(B, name, n)
  local at = B.pos
  local rem = B.limit - at
  if n > rem then
    bput(B, B.X.missing, name_of(B, name), at, rem, nil, nil, nil, true)
    braise("past_end", at, name, "read past end: needs " .. n .. " bytes, " .. rem .. " remain")
  end
  B.pos = at + n
  return at
end

-- Unsigned little-endian integer of n (1..4) bytes at offset `at`.
local function le(B, at, n)
  local b0, b1, b2, b3 = sbyte(B.s, at + 1, at + n)
  return b0 + (b1 or 0) * 256 + (b2 or 0) * 65536 + (b3 or 0) * 16777216
end

-- The tagged format's varint at the current position (tagged/varint.rs read_varint): a number,
-- or a UInt64 once it may pass 2^53; and its length. Errors are reported by the caller.
local MAX57 = UInt64(4294967295, 33554431)
local function varint(B)
  local x, big = 0, false
  for i = 0, 9 do
    local p = B.pos + i
    if p >= B.limit then return nil, "past_end", B.limit - B.pos end
    local b = sbyte(B.s, p + 1)
    if big then x = x + UInt64(b % 128) else x = x + b % 128 end
    if b < 128 then return x, i + 1 end
    if i == 9 then return nil, "invalid_varint" end
    if not big and x >= 35184372088832 then x, big = UInt64(x), true end
    if big then
      local nx = x + UInt64(1)
      if nx > MAX57 then return nil, "invalid_varint" end
      x = nx * UInt64(128)
    else
      x = (x + 1) * 128
    end
  end
end

-- (`err`, when given, is the name the error gives: a string's length is shown as `name.len`.)
local function varint_error(B, pf, name, why, rem, err)
  local at = B.pos
  err = err or name
  bput(B, B.X.missing, name_of(B, name), at, 0, nil, nil, nil, true)
  if why == "past_end" then
    braise("past_end", at, err, "read past end: needs " .. (rem + 1) .. " bytes, " .. rem .. " remain")
  end
  braise("invalid_varint", at, err, "varint longer than 10 bytes or over 64 bits")
end

local function bigger(a, b)
  if type(a) == type(b) then return a > b end
  return UInt64(a) > UInt64(b)
end

-- The range check made after a value is read (schema batch/interpret.rs check_value): `K` is
-- { abs = true, max, maxt } (|v| <= max) or { min, max, mint, maxt }; 64-bit bounds are UInt64.
local function magnitude(v)
  if type(v) == "number" then return v < 0 and -v or v end
  if typeof(v) == "Int64" then
    local u = UInt64.fromhex(v:tohex())
    if v < Int64(0) then return UInt64(0) - u end
    return u
  end
  return v
end

local function bcheck(K, v, at, err)
  if not K then return end
  local a = magnitude(v)
  if K.abs then
    if bigger(a, K.max) then braise("out_of_range", at, err, dec(a) .. " out of range 0..=" .. K.maxt) end
  elseif bigger(K.min, a) or bigger(a, K.max) then
    braise("out_of_range", at, err, dec(a) .. " out of range " .. K.mint .. "..=" .. K.maxt)
  end
end

-- The declared range a checked value's label shows, as the trace records it (batch/stream.rs
-- trace_range): ", min..=max", or ", -max..=max" for `abs`.
local function krange(K)
  if not K then return nil end
  if K.abs then
    if K.maxt == "0" then return ", 0..=0" end
    return ", -" .. K.maxt .. "..=" .. K.maxt
  end
  return ", " .. K.mint .. "..=" .. K.maxt
end

-- Fixed-width primitives: `P` names one ("u8" ... "f64", "bool").
local SIZE = { bool = 1, u8 = 1, i8 = 1, u16 = 2, i16 = 2, u32 = 4, i32 = 4, f32 = 4, u64 = 8, i64 = 8, f64 = 8 }

-- The value of primitive P at offset `at` (no item, no check).
local function prim_value(B, P, at)
  local n = SIZE[P]
  if P == "f32" then return f32_bits(le(B, at, 4)) end
  if P == "f64" then return f64_bits(le(B, at, 4), le(B, at + 4, 4)) end
  if P == "u64" then return UInt64(le(B, at, 4), le(B, at + 4, 4)) end
  if P == "i64" then return Int64(le(B, at, 4), le(B, at + 4, 4)) end
  local u = le(B, at, n)
  if P == "i8" and u >= 128 then return u - 256 end
  if P == "i16" and u >= 32768 then return u - 65536 end
  if P == "i32" and u >= 2147483648 then return u - 4294967296 end
  return u
end

local function prim_text(B, P, v, at)
  if P == "f32" then return text32(le(B, at, 4)) end
  if P == "f64" then return text64(le(B, at, 4), le(B, at + 4, 4)) end
  return dec(v)
end

-- One primitive: read (an item), bool's own 0/1 check, then the range check K (named `err`).
local function bprim(B, pf, name, P, K, err)
  local at = btake(B, name, SIZE[P])
  local v = prim_value(B, P, at)
  if P == "bool" then
    local text = v == 0 and "false" or v == 1 and "true" or sfmt("%d", v) -- a bad byte shows
    bput(B, pf, name_of(B, name), at, 1, v ~= 0, text)
    if v > 1 then braise("out_of_range", at, name, v .. " out of range 0..=1") end
    return v == 1
  end
  bput(B, pf, name_of(B, name), at, SIZE[P], ival(pf, v), B.vis and prim_text(B, P, v, at), krange(K))
  bcheck(K, v, at, err)
  return v
end

-- Varints: `kind` is "u32", "u64", "i32" or "i64". The field shows the value: for signed kinds
-- the number the zig-zag code stands for (batch/stream.rs traces that too), checked afterwards.
local function unzigzag(x)
  if type(x) == "number" then
    if x % 2 == 0 then return x / 2 end
    return -(x + 1) / 2
  end
  local half = x:rshift(1)
  local v = Int64(half:lower(), half:higher())
  if x:lower() % 2 == 1 then v = -v - Int64(1) end
  return v
end

local function bpacked(B, pf, name, kind, K, err)
  local at = B.pos
  local x, why, rem = varint(B)
  if not x then varint_error(B, pf, name, why, rem) end
  B.pos = at + why
  local v = x
  if kind == "i32" or kind == "i64" then v = unzigzag(x) end
  bput(B, pf, name_of(B, name), at, why, ival(pf, v), B.vis and dec(v), krange(K))
  if kind == "u32" and bigger(x, 4294967295) then
    braise("out_of_range", at, name, dec(x) .. " out of range 0..=4294967295")
  end
  if kind == "i32" and (bigger(v, 2147483647) or bigger(-2147483648, v)) then
    braise("out_of_range", at, name, dec(x) .. " out of range 0..=4294967295")
  end
  bcheck(K, v, at, err)
  return v
end

-- A length or count (fast.rs length): a varint in 0..=max, and count x unit bytes must remain.
-- Shown as `shown` (a string's length is `name.len`, its bytes `name`); errors name `name`.
local function blength(B, pf, name, max, unit, shown)
  local at = B.pos
  local label = name_of(B, shown or name)
  local x, why, rem = varint(B)
  if not x then varint_error(B, pf, shown or name, why, rem, name) end
  B.pos = at + why
  local extra = ", 0..=" .. max
  if bigger(x, max) then
    bput(B, pf, label, at, why, ival(pf, x), dec(x), extra, true)
    braise("out_of_range", at, name, dec(x) .. " out of range 0..=" .. max)
  end
  local left = B.limit - B.pos
  if x * unit > left then
    bput(B, pf, label, at, why, x, dec(x), extra, true)
    braise("past_end", at, name, "read past end: needs " .. (x * unit) .. " bytes, " .. left .. " remain")
  end
  bput(B, pf, label, at, why, x, B.vis and dec(x), extra)
  return x
end

-- The path a string's (or byte vector's) length is shown under: `name.len`, or the element's
-- own for an array element (no name).
local function blen_name(name)
  if name == "" then return nil end
  return name .. ".len"
end

-- n raw bytes (hex), or text (`utf8`): not UTF-8 is a failed field, then invalid_utf8.
local function bslice(B, pf, name, n, utf8)
  local at = btake(B, name, n)
  if utf8 then
    if utf8_ok(B.s, at + 1, at + n) then
      local text = B.s:sub(at + 1, at + n)
      bput(B, pf, name_of(B, name), at, n, text, B.vis and quote(text))
      return text
    end
    bput(B, B.X.missing, name_of(B, name), at, n, nil, hex(B.s, at + 1, at + n), nil, true)
    braise("invalid_utf8", at, name, "string is not valid UTF-8")
  end
  bput(B, pf, name_of(B, name), at, n, nil, B.vis and hex(B.s, at + 1, at + n))
end

local function bstring(B, N, name, max)
  local n = blength(B, N.len, name, max, 1, blen_name(name))
  return bslice(B, N.pf, name, n, true)
end

local function bbytevec(B, N, name, max)
  local n = blength(B, N.len, name, max, 1, blen_name(name))
  bslice(B, N.pf, name, n, false)
end

-- Plain old data: `len` elements of P in one copy (one field of bytes), then read again for
-- bool's 0/1 and the range check K: the largest |v| for `abs`, else the first value outside.
local function bpod(B, pf, name, P, len, K, err)
  local at = B.pos
  bslice(B, pf, name, SIZE[P] * len, false)
  local worst
  for i = 0, len - 1 do
    local off = at + i * SIZE[P]
    local v = prim_value(B, P, off)
    if P == "bool" and v > 1 then braise("out_of_range", off, name, v .. " out of range 0..=1") end
    if K and K.abs then
      local a = magnitude(v)
      if not worst or bigger(a, worst) then worst = a end
    elseif K then
      bcheck(K, v, at, err)
    end
  end
  if K and K.abs and worst then bcheck(K, worst, at, err) end
end

-- A pod struct: its bytes as one field, then its fields read again (without items) for their
-- checks. `P` lists the fields: { kind = "prim" / "pod" / "struct" / "bytes", ... }.
local function pod_check(B, fields, at)
  for _, f in ipairs(fields) do
    if f.kind == "prim" then
      local v = prim_value(B, f.p, at)
      if f.p == "bool" and v > 1 then braise("out_of_range", at, f.name, v .. " out of range 0..=1") end
      bcheck(f.k, v, at, f.name)
    elseif f.kind == "pod" then
      local worst
      for i = 0, f.len - 1 do
        local off = at + i * SIZE[f.p]
        local v = prim_value(B, f.p, off)
        if f.p == "bool" and v > 1 then braise("out_of_range", off, f.name, v .. " out of range 0..=1") end
        if f.k and f.k.abs then
          local a = magnitude(v)
          if not worst or bigger(a, worst) then worst = a end
        elseif f.k then
          bcheck(f.k, v, at, f.name)
        end
      end
      if f.k and f.k.abs and worst then bcheck(f.k, worst, at, f.name) end
    elseif f.kind == "struct" then
      pod_check(B, f.fields, at)
    end
    at = at + f.size
  end
end

local function bpodstruct(B, pf, name, size, fields)
  local at = B.pos
  bslice(B, pf, name, size, false)
  pod_check(B, fields, at)
end

-- Scopes: structs and arrays (and array elements), sized when they close.
local function bopen(B, pf, name, path)
  local d = B.depth + 1
  B.depth = d
  local ti = B.tree:add(pf, B.tvb(B.pos, 0))
  B.s_ti[d], B.s_start[d], B.s_name[d], B.s_tree[d], B.s_path[d] = ti, B.pos, name, B.tree, B.path
  B.tree, B.path = ti, path
end

local function bclose(B)
  local d = B.depth
  local ti, start = B.s_ti[d], B.s_start[d]
  if B.vis then
    ti:set_len(B.pos - start)
    ti:set_text(B.s_name[d] .. " [byte " .. start .. ", " .. (B.pos - start) .. " bytes]")
  end
  B.tree, B.path = B.s_tree[d], B.s_path[d]
  B.depth = d - 1
end

local function bstruct(B, N, name, body)
  bopen(B, N.pf, name_of(B, name), join(B.path, name))
  body(B, N.f)
  bclose(B)
end

-- An array: its count (a field named like the array), then the elements under [i] in a scope.
local function barray(B, N, name, max, unit, E)
  local n = blength(B, N.len, name, max, unit)
  bopen(B, N.pf, name_of(B, name), join(B.path, name))
  local path = B.path
  for i = 0, n - 1 do
    B.idx = "[" .. i .. "]"
    B.path = path .. B.idx
    E(B, N.e, name)
  end
  B.path = path
  bclose(B)
end

-- ---- the batch dissector -------------------------------------------------------------------
-- BATCH = { label, messages[type] = { name, body, node }, stages[stage] = name }.

local function bmessage_text(e, index, offset, mtype)
  local t = "byte " .. e.at
  if index then t = t .. " (message " .. index .. " at byte " .. offset .. ", type " .. mtype .. ")" end
  if e.field ~= "" then t = t .. " (field \"" .. e.field .. "\")" end
  return t .. ": " .. e.text
end

local function dissect_batch(tvb, pinfo, tree)
  pinfo.cols.protocol = BATCH.label
  local root = tree:add(BPROTO, tvb())
  local X = BX
  if unread(tvb, pinfo, root, X.status) then return end
  local status
  local s, len = tvb:raw(), tvb:len()
  local B = {
    s = s, len = len, tvb = tvb, X = X, depth = 0, idx = "", vis = root.visible,
    s_ti = {}, s_start = {}, s_name = {}, s_tree = {}, s_path = {},
  }
  local framing, names = nil, {}
  if len < 2 then
    framing = { kind = "past_end", at = 0, field = "batch_len", text = "read past end: needs 2 bytes, " .. len .. " remain" }
  else
    local declared = le(B, 0, 2)
    root:add(X.batch_len, tvb(0, 2), declared):set_text("batch_len: " .. declared .. " [byte 0, 2 bytes]")
    if declared ~= len or declared < 2 then
      framing = { kind = "batch_length", at = 0, field = "batch_len",
        text = "batch header says " .. declared .. " bytes, datagram has " .. len .. " (truncated or padded)" }
    end
  end
  local pos, index, bad, first_err = 2, 0, 0, nil
  while not framing and pos < len do
    local rest = len - pos
    local mtype = sbyte(s, pos + 1)
    if rest < 4 then
      framing = { kind = "past_end", at = pos, field = "header", text = "read past end: needs 4 bytes, " .. rest .. " remain", index = index }
      framing.message = bmessage_text(framing, index, pos, mtype)
      break
    end
    local stage, blen = sbyte(s, pos + 2), le(B, pos + 2, 2)
    local def = BATCH.messages[mtype]
    local mname = def and def.name or "unknown"
    local shown = 4 + blen
    if shown > rest then shown = rest end
    local mi = root:add(X.message, tvb(pos, shown), mname)
    mi:set_text("[" .. index .. "]: " .. mname .. " [byte " .. pos .. ", " .. (4 + blen) .. " bytes]")
    local hi = mi:add(X.header, tvb(pos, 4))
    hi:set_text("header [byte " .. pos .. ", 4 bytes]")
    hi:add(X.type, tvb(pos, 1), mtype):set_text("type: " .. mtype .. " [byte " .. pos .. ", 1 bytes]")
    local sname = BATCH.stages[stage]
    hi:add(X.stage, tvb(pos + 1, 1), stage):set_text("stage: " .. (sname and (sname .. " (" .. stage .. ")") or stage)
      .. " [byte " .. (pos + 1) .. ", 1 bytes]")
    hi:add(X.len, tvb(pos + 2, 2), blen):set_text("len: " .. blen .. " [byte " .. (pos + 2) .. ", 2 bytes]")
    local mstatus, merr, mkind, mitem
    if blen > rest - 4 then
      framing = { kind = "body_length", at = pos + 2, field = "len",
        text = "message body of " .. blen .. " bytes, only " .. (rest - 4) .. " remain in the batch" }
      merr = bmessage_text(framing, index, pos, mtype)
      framing.message, framing.shown = merr, true
      mstatus, mkind = "error", "body_length"
    elseif not def then
      mstatus = "unknown_type"
      if blen > 0 then
        mi:add(X.body, tvb(pos + 4, blen)):set_text("body: " .. hex(s, pos + 5, pos + 4 + blen) .. " [byte " .. (pos + 4) .. ", " .. blen .. " bytes]")
      end
    else
      B.pos, B.limit, B.tree, B.path, B.depth, B.fail_item = pos + 4, pos + 4 + blen, mi, "", 0, nil
      local ok, e = pcall(def.body, B, def.node)
      if ok and B.pos < B.limit then
        ok, e = false, setmetatable({ kind = "trailing_body", at = B.pos, field = "",
          text = (B.limit - B.pos) .. " bytes left unread at the end of the message body" }, BFAIL)
      end
      if ok then
        mstatus = "ok"
      else
        if getmetatable(e) ~= BFAIL then error(e, 0) end
        while B.depth > 0 do bclose(B) end
        mstatus, mkind, mitem = "error", e.kind, B.fail_item
        merr = bmessage_text(e, index, pos, mtype)
      end
    end
    meta(mi, X.status, tvb, mstatus, "status: " .. mstatus)
    if merr then
      meta(mi, X.error, tvb, merr, "error: " .. merr)
      ;(mitem or mi):add_proto_expert_info(BEXPERT[mkind], merr)
      bad = bad + 1
      first_err = first_err or merr
    end
    names[#names + 1] = mname
    if framing then break end
    pos = pos + 4 + blen
    index = index + 1
  end
  local summary
  if framing then
    status = "error"
    local message = framing.message or bmessage_text(framing)
    meta(root, X.status, tvb, status, "status: " .. status)
    meta(root, X.error, tvb, message, "error: " .. message)
    if not framing.shown then root:add_proto_expert_info(BEXPERT[framing.kind], message) end
    summary = "error: " .. message
    root:append_text(": error (" .. framing.kind .. " at byte " .. framing.at .. ")")
  else
    -- One status per datagram, as bitlens gives it: a corrupt message makes the batch an
    -- error, with the first corrupt message's error.
    status = bad > 0 and "error" or "ok"
    meta(root, X.status, tvb, status, "status: " .. status)
    if first_err then meta(root, X.error, tvb, first_err, "error: " .. first_err) end
    local count = #names .. (#names == 1 and " message" or " messages")
    if bad > 0 then count = count .. ", " .. bad .. " corrupt" end
    summary = count .. " (" .. table.concat(names, ", ") .. ")"
    root:append_text(": " .. count)
  end
  pinfo.cols.info = summary
end

-- A datagram is a batch when its length header matches and its messages fill it exactly.
local function heuristic_batch(tvb, pinfo, tree)
  local len = tvb:len()
  if len < 6 or len < tvb:reported_len() then return false end
  local s = tvb:raw()
  local b0, b1 = sbyte(s, 1, 2)
  if b0 + b1 * 256 ~= len then return false end
  local pos = 2
  while pos < len do
    if len - pos < 4 then return false end
    local c0, c1 = sbyte(s, pos + 3, pos + 4)
    pos = pos + 4 + c0 + c1 * 256
  end
  if pos ~= len then return false end
  dissect_batch(tvb, pinfo, tree)
  return true
end
