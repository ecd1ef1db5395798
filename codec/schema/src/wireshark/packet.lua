-- ---- bitlens runtime: the bit-packed packet reader (WIRE.md section 1) --------------------------
-- Mirrors the Rust reader primitive by primitive (codec/src/read.rs, stream.rs, quantize.rs): the
-- same bits, checks, error kinds, error bits, field paths and messages, so that this dissector and
-- `bitlens decode --json` agree on every datagram. Stream bit k is bit k % 8 of byte k / 8; a value
-- of n bits has its bit i at stream bit pos + i (over 32 bits: the low 32 bits, then the rest).
--
-- The reader `R` holds the datagram (R.s, R.len bytes, R.n bits), the position R.pos, the tree
-- item fields go under (R.tree), the path of that scope (R.path) and, for an array element, its
-- label "[i]" (R.idx). A violation raises a FAIL table {kind, bit, field, text}, caught once per
-- datagram. In a dry run (R.dry) nothing is added to the tree: a scope whose item carries a value
-- (a string, a relative index) is read dry first, to learn that value, then read again for real.

local FAIL = {}

-- Path of `leaf` inside the current scope, as the trace and the error path spell it.
local function join(path, leaf)
  if leaf == "" then return path end
  if path == "" then return leaf end
  return path .. "." .. leaf
end

local function raise(R, kind, bit, leaf, text)
  error(setmetatable({ kind = kind, bit = bit, field = join(R.path, leaf), text = text }, FAIL), 0)
end

local function past_end(R, bit, leaf, needed, remaining)
  raise(R, "past_end", bit, leaf, "read past end: needs " .. needed .. " bits, " .. remaining .. " remain")
end

-- n (1..32) bits at the current position, consumed.
local function take(R, leaf, n)
  local p = R.pos
  local rem = R.n - p
  if n > rem then past_end(R, p, leaf, n, rem) end
  local b0, b1, b2, b3, b4 = sbyte(R.s, floor(p / 8) + 1, floor((p + n - 1) / 8) + 1)
  local v = b0 + (b1 or 0) * 256 + (b2 or 0) * 65536 + (b3 or 0) * 16777216 + (b4 or 0) * 4294967296
  R.pos = p + n
  return floor(v / P2[p % 8]) % P2[n]
end

-- n (33..64) bits as two numbers: the low 32 bits and the rest. Checked as a whole first.
local function take_wide(R, leaf, n)
  local rem = R.n - R.pos
  if n > rem then past_end(R, R.pos, leaf, n, rem) end
  local lo = take(R, leaf, 32)
  return lo, take(R, leaf, n - 32)
end

-- The bytes holding bits bit .. bit + bits - 1, as a TvbRange (no bytes for no bits).
local function rng(R, bit, bits)
  local b0 = floor(bit / 8)
  if bits == 0 then
    if b0 > R.len then b0 = R.len end
    return R.tvb(b0, 0)
  end
  return R.tvb(b0, floor((bit + bits - 1) / 8) + 1 - b0)
end

-- Adds a field item "name: text [bit B, N bits, extra]" (a failed one is marked). When the tree
-- is not shown (R.vis false: Wireshark's packet list, tshark without -V or -T), only the value
-- is added, for filters and columns; callers then pass no text.
local STOP = "  <- read stopped here"
local function put(R, pf, name, bit, bits, value, text, extra, failed)
  if R.dry then return end
  if pf ~= X.pad then R.vend = bit + bits end
  if not R.vis and not failed then
    if value == nil then R.tree:add(pf, rng(R, bit, bits)) else R.tree:add(pf, value) end
    return
  end
  local label = label_of(name, text or nil, " [bit " .. bit .. ", " .. bits .. " bits" .. (extra or "") .. "]"
    .. (failed and STOP or ""))
  local ti
  if value == nil then
    ti = R.tree:add(pf, rng(R, bit, bits))
    ti:set_text(label)
  else
    ti = R.tree:add(pf, rng(R, bit, bits), value, label)
  end
  if failed then R.fail_item = ti end
end

-- The value of an integer field converted for its ProtoField (64-bit fields take objects).
local WIDE = {}
local function ival(pf, v)
  local conv = WIDE[pf]
  if conv then return conv(v) end
  if type(v) ~= "number" then return v:tonumber() end
  return v
end

local function name_of(R, leaf)
  if leaf == "" then return R.idx end
  return leaf
end

-- Scopes (structs, arrays, elements, vectors, quaternions, strings, relative indices): the item is
-- added when the scope opens (`value` for a scope that has one) and gets its length and label when
-- it closes, or when the read stops inside it (`close_all`).
local function open(R, pf, name, path, value)
  local d = R.depth + 1
  R.depth = d
  local ti = false
  if R.dry then
  elseif not R.vis then
    if value == nil then ti = R.tree:add(pf) else ti = R.tree:add(pf, value) end
  elseif value == nil then
    ti = R.tree:add(pf, rng(R, R.pos, 0))
  else
    ti = R.tree:add(pf, rng(R, R.pos, 0), value)
  end
  R.s_ti[d], R.s_start[d], R.s_name[d], R.s_tree[d], R.s_path[d] = ti, R.pos, name, R.tree, R.path
  if ti then R.tree = ti end
  R.path = path
end

local function close(R, text)
  local d = R.depth
  local ti, start = R.s_ti[d], R.s_start[d]
  if ti and R.vis then
    local bits = R.pos - start
    if bits > 0 then ti:set_len(floor((R.pos - 1) / 8) + 1 - floor(start / 8)) end
    ti:set_text(label_of(R.s_name[d], text or nil, " [bit " .. start .. ", " .. bits .. " bits]"))
  end
  R.tree, R.path = R.s_tree[d], R.s_path[d]
  R.depth = d - 1
end

local function close_all(R)
  while R.depth > 0 do close(R) end
end

-- Runs body(R, ...) dry inside a scope at `path`: true and its results when it reads through,
-- false when it stops at a violation. The position and path are restored either way.
local function dry(R, path, body, ...)
  local pos, path0, depth = R.pos, R.path, R.depth
  R.dry, R.path = true, path
  local ok, v, w = pcall(body, R, ...)
  R.dry, R.pos, R.path, R.depth = false, pos, path0, depth
  if not ok and getmetatable(v) ~= FAIL then error(v, 0) end
  return ok, v, w
end

-- ---- primitives -------------------------------------------------------------------------------

local function rbool(R, pf, leaf)
  local bit = R.pos
  local v = take(R, leaf, 1) == 1
  put(R, pf, name_of(R, leaf), bit, 1, v, v and "true" or "false")
  return v
end

-- int(min, max) for |min|, |max| < 2^51: Lua numbers throughout. `names` names enum values.
local function int(R, pf, leaf, min, max, w, names)
  local bit = R.pos
  local raw = 0
  if w > 32 then
    local lo, hi = take_wide(R, leaf, w)
    raw = lo + hi * 4294967296
  elseif w > 0 then
    raw = take(R, leaf, w)
  end
  local v = min + raw
  if raw > max - min then
    put(R, pf, name_of(R, leaf), bit, w, ival(pf, v), sfmt("%d", v), sfmt(", %d..=%d", min, max), true)
    raise(R, "out_of_range", bit, leaf, sfmt("%d out of range %d..=%d", v, min, max))
  end
  if R.dry then return v end
  if not R.vis then
    put(R, pf, nil, bit, w, ival(pf, v))
    return v
  end
  local text = sfmt("%d", v)
  if names then
    local n = names[v]
    if n then text = n .. " (" .. text .. ")" end
  end
  put(R, pf, name_of(R, leaf), bit, w, ival(pf, v), text, sfmt(", %d..=%d", min, max))
  return v
end

-- int(min, max) for wider ranges: `B` = { umin = UInt64 of min's bits, span = UInt64 of
-- max - min, min, max = their decimal text }. The value is an Int64.
local function int_big(R, pf, leaf, B, w, names)
  local bit = R.pos
  local raw
  if w > 32 then
    raw = UInt64(take_wide(R, leaf, w))
  elseif w > 0 then
    raw = UInt64(take(R, leaf, w))
  else
    raw = UInt64(0)
  end
  local u = B.umin + raw
  local v = Int64(u:lower(), u:higher())
  local extra = ", " .. B.min .. "..=" .. B.max
  if raw > B.span then
    local text = dec_add(B.min, tostring(raw))
    -- Past i64::MAX the field's value stays at i64::MAX (its label shows the exact one).
    if text:sub(1, 1) ~= "-" and (#text > 19 or (#text == 19 and text > "9223372036854775807")) then
      v = Int64(4294967295, 2147483647)
    end
    put(R, pf, name_of(R, leaf), bit, w, ival(pf, v), text, extra, true)
    raise(R, "out_of_range", bit, leaf, text .. " out of range " .. B.min .. "..=" .. B.max)
  end
  local text = R.vis and tostring(v)
  if text and names and v >= Int64(-9007199254740991) and v <= Int64(9007199254740991) then
    local n = names[v:tonumber()]
    if n then text = n .. " (" .. text .. ")" end
  end
  put(R, pf, name_of(R, leaf), bit, w, ival(pf, v), text, extra)
  return v
end

-- n raw bits (1..64): a number up to 32 bits, a UInt64 above.
local function rbits(R, pf, leaf, n, maxtext)
  local bit = R.pos
  local v
  if n > 32 then v = UInt64(take_wide(R, leaf, n)) else v = take(R, leaf, n) end
  if R.vis then put(R, pf, name_of(R, leaf), bit, n, ival(pf, v), dec(v), ", 0..=" .. maxtext)
  else put(R, pf, nil, bit, n, ival(pf, v)) end
  return v
end

local function ru64(R, pf, leaf)
  local bit = R.pos
  local v = UInt64(take_wide(R, leaf, 64))
  put(R, pf, name_of(R, leaf), bit, 64, ival(pf, v), R.vis and tostring(v))
  return v
end

local function rf32(R, pf, leaf)
  local bit = R.pos
  local u = take(R, leaf, 32)
  local v = f32_bits(u)
  put(R, pf, name_of(R, leaf), bit, 32, v, R.vis and text32(u))
  return v
end

local function rf64(R, pf, leaf)
  local bit = R.pos
  local lo, hi = take_wide(R, leaf, 64)
  local v = f64_bits(lo, hi)
  put(R, pf, name_of(R, leaf), bit, 64, v, R.vis and text64(lo, hi))
  return v
end

-- Compressed floats (quantize.rs, serialize 1.0), `C` = { M, Mf = f32(M), w, min, delta, rng }:
-- the code in w bits; above M it is out of range (the standard's one refusal); every other code
-- decodes, each step rounded to f32.
local function cf_decode(C, code)
  local n = f32(f32(code) / C.Mf)
  return f32(f32(n * C.delta) + C.min)
end

local function cf(R, pf, leaf, C)
  local bit = R.pos
  local code = take(R, leaf, C.w)
  if code > C.M then
    put(R, pf, name_of(R, leaf), bit, C.w, code, sfmt("%d", code), C.rng, true)
    raise(R, "out_of_range", bit, leaf, sfmt("%d out of range 0..=%d", code, C.M))
  end
  local v = cf_decode(C, code)
  if R.dry then return v end
  if not R.vis then
    put(R, pf, nil, bit, C.w, v)
    return v
  end
  local text = show32(v)
  put(R, pf, name_of(R, leaf), bit, C.w, v, text, C.rng .. ", code " .. code)
  return v, text
end

local function vec(R, N, leaf, C)
  open(R, N.pf, name_of(R, leaf), join(R.path, leaf))
  local _, x = cf(R, N.x, "x", C)
  local _, y = cf(R, N.y, "y", C)
  local _, z = cf(R, N.z, "z", C)
  close(R, x and ("(" .. x .. ", " .. y .. ", " .. z .. ")"))
end

-- Smallest-three quaternions, `Q` = { bits, max, maxf }: largest in 2 bits, then three codes;
-- SL = f32(1/sqrt(2)) and SL2 = 2 * SL as quantize.rs computes them. Every encoding is accepted
-- (a near tie's rebuilt largest can come out below a sent component: seed-style writers send it).
local function quat(R, N, leaf, Q)
  open(R, N.pf, name_of(R, leaf), join(R.path, leaf))
  local largest = int(R, N.largest, "largest", 0, 3, 2)
  local codes = {
    int(R, N.a, "a", 0, Q.max, Q.bits),
    int(R, N.b, "b", 0, Q.max, Q.bits),
    int(R, N.c, "c", 0, Q.max, Q.bits),
  }
  local small = {}
  for i = 1, 3 do
    local n = f32(codes[i] / Q.maxf)
    small[i] = f32(f32(n * SL2) - SL)
  end
  local sum = f32(f32(f32(small[1] * small[1]) + f32(small[2] * small[2])) + f32(small[3] * small[3]))
  local rest = f32(1 - sum)
  local big = 0
  if rest > 0 then big = f32(sqrt(rest)) end
  local q, k = {}, 1
  for i = 0, 3 do
    if i == largest then
      q[i + 1] = big
    else
      q[i + 1] = small[k]
      k = k + 1
    end
  end
  close(R, R.vis and ("(" .. show32(q[1]) .. ", " .. show32(q[2]) .. ", " .. show32(q[3]) .. ", " .. show32(q[4]) .. ")"))
end

-- Padding before align, bytes and checks: recorded when there is any, refused when not zero.
local function padding(R, leaf)
  local bit = R.pos
  local w = (8 - bit % 8) % 8
  if w == 0 then return end
  local pad = take(R, leaf, w)
  put(R, X.pad, "(padding)", bit, w, pad, nil, nil, pad ~= 0)
  if pad ~= 0 then
    raise(R, "nonzero_padding", bit, leaf, sfmt("non-zero alignment padding 0x%x", pad))
  end
end

-- A check marker: align, then 32 bits of the label's hash.
local function check(R, label, expected)
  padding(R, label)
  R.reader_end = R.vend
  local bit = R.pos
  local found = take(R, label, 32)
  local ok = found == expected
  if R.dry then
    if not ok then raise(R, "check_mismatch", bit, label, "") end
    return
  end
  local ti
  if R.vis or not ok then
    ti = R.tree:add(X.check, rng(R, bit, 32), label, sfmt("check %s %s expected 0x%08x found 0x%08x [bit %d, 32 bits]",
      ok and "\226\156\147" or "\226\156\151", quote(label), expected, found, bit) .. (ok and "" or STOP))
  else
    R.tree:add(X.check, label)
  end
  if not ok then
    R.fail_item, R.vend = ti, bit + 32
    R.desync = { label = label, expected = expected, bit = bit, after = R.last_check, reader_end = R.reader_end }
    raise(R, "check_mismatch", bit, label, sfmt(
      "check \"%s\" mismatch: expected 0x%08x, found 0x%08x (reader and writer desynced)", label, expected, found))
  end
  R.last_check, R.vend = label, bit + 32
end

-- `end`: only zero bits may follow in the last byte, and no byte after it.
local function finish(R, leaf)
  local bit = R.pos
  local w = (8 - bit % 8) % 8
  if w > 0 and take(R, leaf, w) ~= 0 then
    raise(R, "trailing_data", bit, leaf, "non-zero bits after the end of the packet")
  end
  local left = floor((R.n - R.pos) / 8)
  if left > 0 then
    raise(R, "trailing_data", R.pos, leaf, left .. " trailing bytes after the end of the packet")
  end
end

-- min(a * m, 2^64 - 1) + pad, saturating, as decimal text (usize arithmetic of the Rust reader).
local function needed_text(a, m, pad)
  if type(a) == "number" and type(m) == "number" and a * m + pad < 9007199254740992 then
    return sfmt("%d", a * m + pad)
  end
  local p = UInt64(sat_mul(a, m))
  if U64_MAX - p < UInt64(pad) then return tostring(U64_MAX) end
  return tostring(p + UInt64(pad))
end

-- An integer as a number (Int64 values beyond 2^53 are approximated: only counts far past the
-- end of any datagram, or a `previous` taken from such a field, are that large).
local function num(v)
  if type(v) == "number" then return v end
  return v:tonumber()
end

-- `len` raw bytes after align, checked against what remains before anything is read (past_end
-- at the bytes' first bit, after the padding).
local function raw_bytes(R, pf, leaf, len)
  local pad = (8 - R.pos % 8) % 8
  local rem = R.n - R.pos
  local n = num(len)
  if n * 8 + pad > rem then past_end(R, R.pos + pad, leaf, needed_text(len, 8, 0), rem - pad) end
  padding(R, leaf)
  local bit = R.pos
  R.pos = bit + n * 8
  if not R.dry then put(R, pf, name_of(R, leaf), bit, n * 8, nil, R.vis and hex(R.s, bit / 8 + 1, bit / 8 + n)) end
  return bit / 8 + 1, n
end

local function rbytes(R, pf, leaf, len)
  raw_bytes(R, pf, leaf, len)
end

-- A string (stream.rs string, serialize 1.0): `len` as int(0, max_len), align, `len` bytes of
-- UTF-8; invalid UTF-8 is refused, then a NUL byte (at its own bit). `L` reads the length (int or
-- int_big).
local function str_body(R, N, L)
  local len = L(R, N.len, "len")
  local b0, n = raw_bytes(R, N.utf8, "utf8", len)
  if not utf8_ok(R.s, b0, b0 + n - 1) then
    raise(R, "invalid_utf8", (b0 - 1) * 8, "utf8", "string is not valid UTF-8")
  end
  local text = R.s:sub(b0, b0 + n - 1)
  local z = text:find("\0", 1, true)
  if z then
    raise(R, "interior_nul", (b0 + z - 2) * 8, "utf8",
      "string holds a NUL character inside its length (a C reader would see a shorter string)")
  end
  return text
end

local function str(R, N, leaf, L)
  local path = join(R.path, leaf)
  local ok, text = false, nil
  if not R.dry then ok, text = dry(R, path, str_body, N, L) end
  if ok then open(R, N.pf, name_of(R, leaf), path, text) else open(R, X.partial, name_of(R, leaf), path) end
  text = str_body(R, N, L)
  close(R, R.vis and quote(text))
  return text
end

-- Relative object index (stream.rs object_index): a 1 flag for d = 1, else tier by tier a flag
-- and d in the tier's range, else d in 126..=max_objects + 1 (`top`, `wtop` bits); the index is
-- previous + d, at most max_objects.
local OI = { { 2, 5, "d<=5", 2 }, { 6, 13, "d<=13", 3 }, { 14, 29, "d<=29", 4 }, { 30, 61, "d<=61", 5 }, { 62, 125, "d<=125", 6 } }
local function oidx_body(R, N, prev, maxo, wtop, start)
  if rbool(R, N.d1, "d=1") then return 1 end
  for t = 1, 5 do
    local T = OI[t]
    if rbool(R, N.t[t], T[3]) then return int(R, N.d, "d", T[1], T[2], T[4]) end
  end
  local top = maxo + 1
  if top < 126 then
    -- Raised inside the index's own scope: R.path already ends with its name.
    raise(R, "out_of_range", start, "", sfmt("%d out of range %d..=%d", prev + 126, prev + 1, maxo))
  end
  return int(R, N.d, "d", 126, top, wtop)
end

local function oidx(R, N, leaf, prev, maxo, wtop)
  local start = R.pos
  local path = join(R.path, leaf)
  local value
  if not R.dry then
    local ok, d = dry(R, path, oidx_body, N, prev, maxo, wtop, start)
    if ok and prev + d <= maxo then value = prev + d end
  end
  if value then open(R, N.pf, name_of(R, leaf), path, ival(N.pf, value))
  else open(R, X.partial, name_of(R, leaf), path) end
  local c = prev + oidx_body(R, N, prev, maxo, wtop, start)
  close(R, R.vis and value and sfmt("%d", value))
  if c > maxo then raise(R, "out_of_range", start, leaf, sfmt("%d out of range %d..=%d", c, prev + 1, maxo)) end
  return c
end

-- serialize 1.0's relative integer (stream.rs int_relative): i32 values, strictly increasing, no
-- wrapping. A 1 flag for d = 1, else tier by tier a flag and d, else the value itself in 32 bits
-- (two's complement). Refused: previous + d past 2147483647, an absolute value not above
-- previous, a previous that is not an i32 (the caller's bug: invalid_argument).
local RI = { { 2, 6, "d<=6", 3 }, { 7, 23, "d<=23", 5 }, { 24, 280, "d<=280", 9 }, { 281, 4377, "d<=4377", 13 }, { 4378, 69914, "d<=69914", 17 } }
local function rel_body(R, N)
  if rbool(R, N.d1, "d=1") then return 1 end
  for t = 1, 5 do
    local T = RI[t]
    if rbool(R, N.t[t], T[3]) then return int(R, N.d, "d", T[1], T[2], T[4]) end
  end
  return nil, rbits(R, N.value, "value", 32, "4294967295")
end

local function rel_value(prev, d, absolute)
  local c
  if absolute then
    c = absolute
    if c >= 2147483648 then c = c - 4294967296 end
  else
    c = prev + d
  end
  if c <= prev or c > 2147483647 then return nil, c end
  return c
end

local function rel(R, N, leaf, prev)
  local start = R.pos
  if prev < -2147483648 or prev > 2147483647 then
    raise(R, "invalid_argument", start, leaf,
      sfmt("invalid argument: previous %d is not a 32-bit signed integer", prev))
  end
  local path = join(R.path, leaf)
  local value
  if not R.dry then
    local ok, d, absolute = dry(R, path, rel_body, N)
    if ok then value = rel_value(prev, d, absolute) end
  end
  if value then open(R, N.pf, name_of(R, leaf), path, ival(N.pf, value))
  else open(R, X.partial, name_of(R, leaf), path) end
  local c, bad = rel_value(prev, rel_body(R, N))
  close(R, R.vis and value and sfmt("%d", value))
  if not c then
    raise(R, "out_of_range", start, leaf, sfmt("%d out of range %d..=2147483647", bad, prev + 1))
  end
  return c
end

-- A struct's fields in a scope of its own.
local function struct(R, N, leaf, body)
  open(R, N.pf, name_of(R, leaf), join(R.path, leaf))
  body(R, N.f)
  close(R)
end

-- A tagged union (schema lib.rs union_value): the tag as int(0, last) named by its variant, then
-- the variant's body fields in the same scope. `U` = { tag (its name), last, w, names, bodies
-- (per variant, from 1: the index of its body's function in `S`, or false) }.
local function union(R, N, leaf, U, S)
  open(R, N.pf, name_of(R, leaf), join(R.path, leaf))
  local t = int(R, N.tag, U.tag, 0, U.last, U.w, U.names)
  local body = U.bodies[t + 1]
  if body then S[body](R, N.v[t + 1]) end
  close(R)
end

-- An array (stream.rs array): `len` as int(0, max_len) (read by `L`), checked as len x
-- max(1, min_bits) against what remains (past_end at the length's first bit), then each element
-- under [i] (read by `E`).
local function array(R, N, leaf, L, minbits, E)
  open(R, N.pf, name_of(R, leaf), join(R.path, leaf))
  local at = R.pos
  local len = L(R, N.len, "len")
  local n = num(len)
  local rem = R.n - R.pos
  local over
  if type(minbits) == "number" then over = n * minbits > rem else over = n > 0 end
  if over then past_end(R, at, "len", needed_text(len, minbits, 0), rem) end
  local path = R.path
  for i = 0, n - 1 do
    R.idx = "[" .. i .. "]"
    R.path = path .. R.idx
    E(R, N.e)
  end
  R.path = path
  close(R)
end

-- A run of raw bits whose count the table T picks by an earlier field's value `by` (bit_run.rs):
-- n = T[by mod #T], read under [i] as floor(n / 32) groups of 32 bits, then the n % 32 left.
-- `by` is a Lua number (the exporter refuses wider fields); Lua's % is never negative here.
local function bitrun(R, N, leaf, by, T)
  open(R, N.pf, name_of(R, leaf), join(R.path, leaf))
  local n = T[by % #T + 1]
  local path = R.path
  local i = 0
  while n > 0 do
    local w = 32
    if n < 32 then w = n end
    R.idx = "[" .. i .. "]"
    R.path = path .. R.idx
    rbits(R, N.e, "", w, sfmt("%d", P2[w] - 1))
    n = n - w
    i = i + 1
  end
  R.path = path
  close(R)
end

-- A sparse array (seed 000, array subsets): under [i], the relative object index, then the
-- element's fields; closed by the index max_objects.
local function sparse(R, N, leaf, iname, maxo, wtop, body)
  open(R, N.pf, name_of(R, leaf), join(R.path, leaf))
  local path = R.path
  local prev, i = -1, 0
  while true do
    R.idx = "[" .. i .. "]"
    open(R, N.pf, R.idx, path .. R.idx)
    local c = oidx(R, N.index, iname, prev, maxo, wtop)
    if c == maxo then
      close(R)
      break
    end
    prev = c
    body(R, N.f)
    close(R)
    i = i + 1
  end
  close(R)
end

-- ---- 128-bit integers (serialize 1.0's int128, u128 and fixed): 9 limbs of 16 bits ---------------
-- Least significant first; 144 bits, so that a sum or a fraction times 10 never wraps.

local NL = 9

-- w (0..128) bits at the current position, checked as a whole first.
local function lread(R, leaf, w)
  local rem = R.n - R.pos
  if w > rem then past_end(R, R.pos, leaf, w, rem) end
  local a = { 0, 0, 0, 0, 0, 0, 0, 0, 0 }
  local i = 1
  while w > 0 do
    local n = w < 16 and w or 16
    a[i] = take(R, leaf, n)
    w, i = w - n, i + 1
  end
  return a
end

local function lcmp(a, b)
  for i = NL, 1, -1 do
    if a[i] ~= b[i] then return a[i] > b[i] and 1 or -1 end
  end
  return 0
end

local function ladd(a, b)
  local r, c = {}, 0
  for i = 1, NL do
    local x = a[i] + b[i] + c
    r[i], c = x % 65536, floor(x / 65536)
  end
  return r
end

-- a - b for a >= b.
local function lsub(a, b)
  local r, c = {}, 0
  for i = 1, NL do
    local x = a[i] - b[i] - c
    if x < 0 then x, c = x + 65536, 1 else c = 0 end
    r[i] = x
  end
  return r
end

-- The low 128 bits, read as two's complement: negative, and the magnitude.
local function lsigned(a)
  local m = {}
  for i = 1, 8 do m[i] = a[i] end
  m[9] = 0
  if m[8] < 32768 then return false, m end
  local z = { 0, 0, 0, 0, 0, 0, 0, 0, 1 }
  return true, lsub(z, m)
end

local function lzero(a)
  for i = 1, NL do if a[i] ~= 0 then return false end end
  return true
end

-- Unsigned decimal text.
local function ldec(a)
  local x, parts = {}, {}
  for i = 1, NL do x[i] = a[i] end
  repeat
    local rem = 0
    for i = NL, 1, -1 do
      local cur = rem * 65536 + x[i]
      x[i], rem = floor(cur / 10000), cur % 10000
    end
    parts[#parts + 1] = rem
  until lzero(x)
  local t = { sfmt("%d", parts[#parts]) }
  for i = #parts - 1, 1, -1 do t[#t + 1] = sfmt("%04d", parts[i]) end
  return concat(t)
end

local function lsdec(a)
  local neg, m = lsigned(a)
  return (neg and "-" or "") .. ldec(m)
end

-- The value of limbs as a double (for a field's value: the label has the exact text).
local function ldouble(a)
  local neg, m = lsigned(a)
  local x = 0
  for i = 8, 1, -1 do x = x * 65536 + m[i] end
  return neg and -x or x
end

-- The exact decimal text of raw / 2^f (fixed.rs to_decimal), raw as limbs (two's complement).
local function lfixed(a, f)
  local neg, m = lsigned(a)
  -- int = m >> f, frac = m mod 2^f
  local int, frac = {}, {}
  for i = 1, NL do int[i], frac[i] = 0, 0 end
  for b = 0, 127 do
    local bitv = floor(m[floor(b / 16) + 1] / P2[b % 16]) % 2
    if bitv == 1 then
      if b >= f then
        local k = b - f
        local i = floor(k / 16) + 1
        int[i] = int[i] + P2[k % 16]
      else
        local i = floor(b / 16) + 1
        frac[i] = frac[i] + P2[b % 16]
      end
    end
  end
  local t = { neg and "-" or "", ldec(int) }
  if not lzero(frac) then
    t[#t + 1] = "."
    while not lzero(frac) do
      -- frac * 10, then the digit above bit f.
      local c = 0
      for i = 1, NL do
        local x = frac[i] * 10 + c
        frac[i], c = x % 65536, floor(x / 65536)
      end
      local digit = 0
      for b = f, f + 3 do
        if floor(frac[floor(b / 16) + 1] / P2[b % 16]) % 2 == 1 then
          digit = digit + P2[b - f]
          local i = floor(b / 16) + 1
          frac[i] = frac[i] - P2[b % 16]
        end
      end
      t[#t + 1] = sfmt("%d", digit)
    end
  end
  return concat(t)
end

-- int(min, max) over 128 bits (stream.rs int128): the offset from min in w bits; above the span
-- it is out of range (the field shows min + offset, or nothing when that passes i128, and the
-- error says "min + offset"). `W` = { w, span, min (limbs), neg (min < 0), mag (|min|), mint,
-- maxt }. Returns the value as limbs (two's complement), adding no item when it is in range.
local function int128_read(R, pf, leaf, W, numeric)
  local bit = R.pos
  local off = lread(R, leaf, W.w)
  if lcmp(off, W.span) > 0 then
    local text
    if not W.neg then
      local x = ladd(W.min, off)
      if x[9] == 0 and x[8] < 32768 then text = ldec(x) end
    elseif lcmp(off, W.mag) >= 0 then
      local x = lsub(off, W.mag)
      if x[9] == 0 and x[8] < 32768 then text = ldec(x) end
    else
      text = "-" .. ldec(lsub(W.mag, off))
    end
    local value = text or ""
    if numeric then value = tonumber(value) or 0 end
    put(R, pf, name_of(R, leaf), bit, W.w, value, text, ", " .. W.mint .. "..=" .. W.maxt, true)
    if text then
      raise(R, "out_of_range", bit, leaf, text .. " out of range " .. W.mint .. "..=" .. W.maxt)
    end
    raise(R, "out_of_range", bit, leaf, W.mint .. " + " .. ldec(off) .. " out of range " .. W.mint .. "..=" .. W.maxt)
  end
  local v = ladd(W.min, off)
  v[9] = 0
  return v
end

local function int128(R, pf, leaf, W)
  local bit = R.pos
  local v = int128_read(R, pf, leaf, W)
  if not R.dry then
    local text = lsdec(v)
    put(R, pf, name_of(R, leaf), bit, W.w, text, R.vis and text, R.vis and (", " .. W.mint .. "..=" .. W.maxt))
  end
  return v
end

-- 128 raw bits (stream.rs u128): the low 64 bits, then the high 64.
local function ru128(R, pf, leaf)
  local bit = R.pos
  local v = lread(R, leaf, 128)
  local text = ldec(v)
  put(R, pf, name_of(R, leaf), bit, 128, text, text)
  return v
end

-- A Q-format value (stream.rs fixed): the raw value as int128 over the raw bounds (`Q.W`),
-- shown as its exact decimal, raw / 2^f (`Q.f`); its field's value is the nearest double.
local function fixed(R, pf, leaf, Q)
  local bit = R.pos
  local raw = int128_read(R, pf, leaf, Q.W, true)
  if not R.dry then
    put(R, pf, name_of(R, leaf), bit, Q.W.w, ldouble(raw) / P2[Q.f], R.vis and lfixed(raw, Q.f),
      R.vis and (", " .. Q.W.mint .. "..=" .. Q.W.maxt .. ", raw " .. lsdec(raw)))
  end
  return raw
end

-- A UTF-16 code point sequence as UTF-8.
local function utf8_char(c)
  if c < 0x80 then return string.char(c) end
  if c < 0x800 then return string.char(0xC0 + floor(c / 64), 0x80 + c % 64) end
  if c < 0x10000 then
    return string.char(0xE0 + floor(c / 4096), 0x80 + floor(c / 64) % 64, 0x80 + c % 64)
  end
  return string.char(0xF0 + floor(c / 262144), 0x80 + floor(c / 4096) % 64, 0x80 + floor(c / 64) % 64, 0x80 + c % 64)
end

-- serialize 1.0's wide string (stream.rs wstring): `len` code units as int(0, max_len), each in a
-- 32-bit group under utf16[i]; refused: a group above 0xFFFF, a zero group, an unpaired surrogate.
local function wstr_body(R, N, L)
  local at = R.pos
  local len = L(R, N.len, "len")
  local n = num(len)
  local rem = R.n - R.pos
  if n * 32 > rem then past_end(R, at, "len", needed_text(len, 32, 0), rem) end
  local base = join(R.path, "utf16")
  open(R, N.utf16, "utf16", base)
  local out, high, hbit, hi = {}, nil, nil, nil
  local function refuse(kind, at, i, text)
    R.path = base .. "[" .. i .. "]"
    raise(R, kind, at, "", text)
  end
  for i = 0, n - 1 do
    R.idx = "[" .. i .. "]"
    R.path = base .. R.idx
    local bit = R.pos
    local g = take(R, "", 32)
    -- Traced with the code units' range: a group above it is where the read stops.
    put(R, N.unit, R.idx, bit, 32, g, R.vis and sfmt("%d", g), ", 0..=65535", g > 0xFFFF)
    if g > 0xFFFF then refuse("out_of_range", bit, i, sfmt("%d out of range 0..=65535", g)) end
    if g == 0 then
      refuse("interior_nul", bit, i,
        "string holds a NUL character inside its length (a C reader would see a shorter string)")
    end
    local low = g >= 0xDC00 and g <= 0xDFFF
    if high then
      if not low then
        refuse("invalid_utf16", hbit, hi, "string is not valid UTF-16: a high surrogate not followed by a low one")
      end
      out[#out + 1] = utf8_char(0x10000 + (high - 0xD800) * 1024 + (g - 0xDC00))
      high = nil
    elseif low then
      refuse("invalid_utf16", bit, i, "string is not valid UTF-16: a low surrogate not preceded by a high one")
    elseif g >= 0xD800 and g <= 0xDBFF then
      high, hbit, hi = g, bit, i
    else
      out[#out + 1] = utf8_char(g)
    end
  end
  if high then
    refuse("invalid_utf16", hbit, hi, "string is not valid UTF-16: a high surrogate as the last code unit")
  end
  R.path = base
  close(R)
  return concat(out)
end

local function wstr(R, N, leaf, L)
  local path = join(R.path, leaf)
  -- The label first: the body's code units reuse R.idx (an array element's "[i]").
  local name = name_of(R, leaf)
  local ok, text = false, nil
  if not R.dry then ok, text = dry(R, path, wstr_body, N, L) end
  if ok then open(R, N.pf, name, path, text) else open(R, X.partial, name, path) end
  text = wstr_body(R, N, L)
  close(R, R.vis and quote(text))
  return text
end

-- ---- framing and the dissector ----------------------------------------------------------------
-- FRAME = { mtu, crc0 = CRC-32 of the protocol id and four zero bytes, ntypes, type_w, names
-- (type names from 0), ptype (the packet_type field), body[t + 1], root[t + 1] }.

-- WIRE.md section 1: at most MTU bytes; the CRC over the id and the packet with its CRC field
-- zeroed; the type; the body; the "end of packet" check; nothing after.
local function read_packet(R)
  if R.len > FRAME.mtu then
    raise(R, "too_long", 0, "", "datagram of " .. R.len .. " bytes exceeds the MTU of " .. FRAME.mtu)
  end
  local found = take(R, "crc32", 32)
  local expected = crc32(FRAME.crc0, R.s, 5, R.len)
  local ok = found == expected
  local ti = R.tree:add(X.crc, R.tvb(0, 4), found)
  ti:set_text(sfmt("crc32 %s expected 0x%08x found 0x%08x [bit 0, 32 bits]",
    ok and "\226\156\147" or "\226\156\151", expected, found) .. (ok and "" or STOP))
  R.vend = 32
  if not ok then
    R.fail_item = ti
    raise(R, "crc_mismatch", 0, "crc32", sfmt(
      "CRC32 mismatch: computed 0x%08x, packet has 0x%08x (corrupt, or another protocol id)", expected, found))
  end
  local t = 0
  if FRAME.ntypes > 1 then t = int(R, FRAME.ptype, "packet_type", 0, FRAME.ntypes - 1, FRAME.type_w, FRAME.names) end
  R.ptype = t
  FRAME.body[t + 1](R, FRAME.root[t + 1])
  check(R, "end of packet", 0x9908ACE2)
  finish(R, "end")
end

-- Where a desynced reader really is (inspector/src/decode.rs locate_desync): the writer's marker
-- searched at byte offsets within 64 bytes of where the reader looked, nearest first; the zero
-- padding before it bounds where the writer's last field ended.
local function desync_text(R, D)
  local s, len, bit = R.s, R.len, D.bit
  local function u32at(b)
    if b < 0 or b % 8 ~= 0 or b / 8 + 4 > len then return nil end
    local c0, c1, c2, c3 = sbyte(s, b / 8 + 1, b / 8 + 4)
    return c0 + c1 * 256 + c2 * 65536 + c3 * 16777216
  end
  local found
  for step = 1, 64 do
    if u32at(bit + step * 8) == D.expected then found = bit + step * 8
    elseif u32at(bit - step * 8) == D.expected then found = bit - step * 8 end
    if found then break end
  end
  local between
  if D.after then
    between = "between check '" .. D.after .. "' and check '" .. D.label .. "'"
  else
    between = "before check '" .. D.label .. "'"
  end
  if not found then
    return "reader and writer desynced " .. between .. ": marker not found within 64 bytes of bit " .. bit
  end
  local zeros = 0
  while zeros < 7 and found > zeros do
    local b = found - zeros - 1
    if floor(sbyte(s, floor(b / 8) + 1) / P2[b % 8]) % 2 == 1 then break end
    zeros = zeros + 1
  end
  local lo, hi = found - zeros - D.reader_end, found - D.reader_end
  local dir
  if hi <= 0 then
    dir, lo, hi = "ahead of", -hi, -lo
  else
    dir = "behind"
    if lo < 1 then lo = 1 end
  end
  local amount = lo == hi and sfmt("%d", lo) or sfmt("%d to %d", lo, hi)
  local unit = hi == 1 and "bit" or "bits"
  return sfmt("reader is %s %s %s the writer %s (marker found at bit %d, expected at bit %d)",
    amount, unit, dir, between, found, bit)
end

local function meta(tree, pf, tvb, value, label)
  tree:add(pf, tvb(0, 0), value):set_text(label)
end

local function dissect_packet(tvb, pinfo, tree)
  pinfo.cols.protocol = FRAME.label
  local root = tree:add(PROTO, tvb())
  local status
  if pinfo.fragmented then
    status = "fragment"
  elseif tvb:len() < tvb:reported_len() then
    status = "truncated"
  end
  if status then
    meta(root, X.status, tvb, status, "status: " .. status .. " (not decoded)")
    root:append_text(": " .. status)
    pinfo.cols.info = status
    return
  end
  local R = {
    s = tvb:raw(), len = tvb:len(), tvb = tvb, tree = root, path = "", idx = "", pos = 0, depth = 0,
    vend = 0, s_ti = {}, s_start = {}, s_name = {}, s_tree = {}, s_path = {}, vis = root.visible,
  }
  R.n = R.len * 8
  local ok, e = pcall(read_packet, R)
  local message
  if ok then
    status = "ok"
  else
    if getmetatable(e) ~= FAIL then error(e, 0) end
    close_all(R)
    status = e.kind == "check_mismatch" and "desync" or "error"
    if e.field == "" then
      message = "bit " .. e.bit .. ": " .. e.text
    else
      message = "bit " .. e.bit .. " (field \"" .. e.field .. "\"): " .. e.text
    end
  end
  local tname = R.ptype and FRAME.names[R.ptype]
  if tname then meta(root, X.packet, tvb, tname, "packet type: " .. tname) end
  meta(root, X.status, tvb, status, "status: " .. status)
  local summary = (tname or "?") .. " " .. status
  local short = summary
  if message then
    meta(root, X.error, tvb, message, "error: " .. message)
    ;(R.fail_item or root):add_proto_expert_info(EXPERT[e.kind], message)
    summary = summary .. ": " .. message
    short = short .. " (" .. e.kind .. " at bit " .. e.bit .. ")"
  end
  if status == "desync" and R.desync then
    local d = desync_text(R, R.desync)
    meta(root, X.desync, tvb, d, "desync: " .. d)
    summary = summary .. "; " .. d
  end
  root:append_text(": " .. short)
  pinfo.cols.info = summary
end

-- A datagram is this protocol's when its CRC (with the protocol id folded in) holds.
local function heuristic_packet(tvb, pinfo, tree)
  local len = tvb:len()
  if len < 4 or len > FRAME.mtu or len < tvb:reported_len() then return false end
  local s = tvb:raw()
  local c0, c1, c2, c3 = sbyte(s, 1, 4)
  if c0 + c1 * 256 + c2 * 65536 + c3 * 16777216 ~= crc32(FRAME.crc0, s, 5, len) then return false end
  dissect_packet(tvb, pinfo, tree)
  return true
end
