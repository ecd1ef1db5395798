-- ---- bitlens runtime: arithmetic and text shared by the packet and batch readers ----------------
-- Lua 5.2 (Wireshark 4.0 to 4.2) has only doubles: every integer below 2^53 is exact, wider ones
-- are Wireshark's Int64 / UInt64 objects. Nothing here uses the bitwise operators of Lua 5.3+ or
-- the bit32 library alone, so the same text loads in Lua 5.4 (Wireshark 4.4 and later).

local floor, huge, sqrt = math.floor, math.huge, math.sqrt
local sbyte, sfmt, concat = string.byte, string.format, table.concat
local frexp = math.frexp

-- P2[k] = 2^k, built by doubling and halving (exact; beyond the double range: inf or 0).
local P2 = {}
do
  local x = 1.0
  for k = 0, 1100 do P2[k] = x; x = x * 2 end
  x = 1.0
  for k = 0, -1100, -1 do P2[k] = x; x = x / 2 end
end

-- XOR of two integers in 0..2^32-1, as an integer in 0..2^32-1.
local bxor
if bit32 then
  bxor = bit32.bxor
elseif bit then
  local bx = bit.bxor
  bxor = function(a, b) return bx(a, b) % 4294967296 end
else
  bxor = load("return function(a, b) return (a ~ b) & 0xFFFFFFFF end")()
end

-- The exponent e with 2^e <= a < 2^(e+1), for a finite a > 0.
local LN2 = math.log(2)
local function exponent(a)
  if frexp then
    local _, e = frexp(a)
    return e - 1
  end
  local e = floor(math.log(a) / LN2)
  if P2[e] > a then e = e - 1 elseif P2[e + 1] <= a then e = e + 1 end
  return e
end

-- x rounded to the nearest f32 (ties to even), as Rust's `x as f32`. Every f32 operation of the
-- reader is a double operation rounded by this: the double result of +, -, *, / and sqrt of two
-- f32 values rounds to the same f32 as the f32 operation itself (53 >= 2 * 24 + 2 bits).
local F32_OVERFLOW = P2[128]
local function f32(x)
  if x ~= x or x == 0 or x == huge or x == -huge then return x end
  local a = x < 0 and -x or x
  local e = exponent(a)
  if e < -126 then e = -126 end
  local ulp = P2[e - 23]
  local q = a / ulp
  local f = floor(q)
  local d = q - f
  if d > 0.5 or (d == 0.5 and f % 2 == 1) then f = f + 1 end
  local r = f * ulp
  if r >= F32_OVERFLOW then r = huge end
  if x < 0 then return -r end
  return r
end

-- The f32 whose IEEE-754 bits are u (0..2^32-1).
local function f32_bits(u)
  local sign = 1
  if u >= 2147483648 then sign = -1; u = u - 2147483648 end
  local e = floor(u / 8388608)
  local m = u % 8388608
  if e == 255 then
    if m == 0 then return sign * huge end
    return 0 / 0
  end
  if e == 0 then return sign * m * P2[-149] end
  return sign * (m + 8388608) * P2[e - 150]
end

-- The f64 whose IEEE-754 bits are hi * 2^32 + lo.
local function f64_bits(lo, hi)
  local sign = 1
  if hi >= 2147483648 then sign = -1; hi = hi - 2147483648 end
  local e = floor(hi / 1048576)
  local m = (hi % 1048576) * 4294967296 + lo
  if e == 2047 then
    if m == 0 then return sign * huge end
    return 0 / 0
  end
  if e == 0 then return sign * m * P2[-1074] end
  return sign * (m + 4503599627370496) * P2[e - 1075]
end

-- Floats as text: the shortest decimal that reads back to the same f32 / f64 (the value is what
-- bitlens shows; only the digits may differ).
-- Values JSON cannot spell as numbers are written as bitlens writes them (float_text.rs): "inf",
-- "-inf", "nan" for the default quiet NaN, "nan:0x" and the bits for any other NaN.
local G = {}
for p = 1, 17 do G[p] = "%." .. p .. "g" end
-- Significant digits of a %g text ("-1.25e-07" has 3).
local function digits_of(t)
  return #(t:match("^-?([%d%.]+)"):gsub("%.", ""):gsub("^0+", ""))
end

-- The shortest %g text of x that reads back as `same` says, searched from `start` digits.
local function shortest(x, start, last, same)
  local p = start
  local t = sfmt(G[p], x)
  if same(tonumber(t), x) then
    -- Fewer digits while they still read back (a text already shorter than p is the shortest).
    while p > 1 and digits_of(t) == p do
      local u = sfmt(G[p - 1], x)
      if not same(tonumber(u), x) then break end
      t, p = u, p - 1
    end
    return t
  end
  for q = start + 1, last do
    t = sfmt(G[q], x)
    if same(tonumber(t), x) then return t end
  end
  return t
end

local function same32(a, x) return f32(a) == x end
local function same64(a, x) return a == x end

local function show32(x)
  if x ~= x then return "nan" end
  if x == huge then return "inf" end
  if x == -huge then return "-inf" end
  return shortest(x, 6, 9, same32)
end
local function show64(x)
  if x ~= x then return "nan" end
  if x == huge then return "inf" end
  if x == -huge then return "-inf" end
  return shortest(x, 15, 17, same64)
end

-- The text of an f32 of bits u, and of an f64 of bits hi * 2^32 + lo (NaN bit patterns kept).
local function text32(u)
  local x = f32_bits(u)
  if x == x then return show32(x) end
  if u == 2143289344 then return "nan" end
  return sfmt("nan:0x%08x", u)
end
local function text64(lo, hi)
  local x = f64_bits(lo, hi)
  if x == x then return show64(x) end
  if hi == 2146959360 and lo == 0 then return "nan" end
  return sfmt("nan:0x%08x%08x", hi, lo)
end

-- An integer (a number below 2^53, or an Int64 / UInt64) as decimal text.
local function dec(v)
  if type(v) == "number" then return sfmt("%d", v) end
  return tostring(v)
end

-- a + b for decimal strings (a signed, b unsigned), exactly: the value of an out-of-range wide
-- integer, min + raw, can exceed every 64-bit type.
local function dec_add(a, b)
  local neg = a:sub(1, 1) == "-"
  if neg then a = a:sub(2) end
  local function digits(s)
    local t = {}
    for i = #s, 1, -1 do t[#t + 1] = sbyte(s, i) - 48 end
    return t
  end
  local x, y = digits(a), digits(b)
  local n = math.max(#x, #y)
  local out = {}
  if not neg then
    local carry = 0
    for i = 1, n do
      local s = (x[i] or 0) + (y[i] or 0) + carry
      out[i] = s % 10; carry = floor(s / 10)
    end
    if carry > 0 then out[n + 1] = carry end
  else
    -- b - a: compare magnitudes first.
    local big, small, sign = y, x, ""
    local cmp = 0
    if #x ~= #y then cmp = #y > #x and 1 or -1 else
      for i = n, 1, -1 do
        if x[i] ~= y[i] then cmp = y[i] > x[i] and 1 or -1; break end
      end
    end
    if cmp < 0 then big, small, sign = x, y, "-" end
    local borrow = 0
    for i = 1, n do
      local s = (big[i] or 0) - (small[i] or 0) - borrow
      if s < 0 then s = s + 10; borrow = 1 else borrow = 0 end
      out[i] = s
    end
    while #out > 1 and out[#out] == 0 do out[#out] = nil end
    if #out == 1 and out[1] == 0 then sign = "" end
    local t = {}
    for i = #out, 1, -1 do t[#t + 1] = out[i] end
    return sign .. concat(t)
  end
  local t = {}
  for i = #out, 1, -1 do t[#t + 1] = out[i] end
  return concat(t)
end

-- min(a * b, 2^64 - 1) as decimal text, for a, b numbers or UInt64 (usize saturating_mul).
local U64_MAX = UInt64(4294967295, 4294967295)
local function sat_mul(a, b)
  if type(a) == "number" and type(b) == "number" and a * b < 9007199254740992 then
    return sfmt("%d", a * b)
  end
  a, b = UInt64(a), UInt64(b)
  if b > UInt64(0) and a > U64_MAX / b then return tostring(U64_MAX) end
  return tostring(a * b)
end

-- Text for people: a string with the escapes of Rust's {:?} for the characters that need them.
local ESC = { ['"'] = '\\"', ["\\"] = "\\\\", ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t", ["\0"] = "\\0" }
local function quote(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    return ESC[c] or sfmt("\\u{%x}", sbyte(c))
  end) .. '"'
end

-- An item's label "name: text tail", within Wireshark's 240-byte label limit (past it Wireshark
-- cuts the end, where the bit offsets are): a long value text is cut instead, at a character
-- boundary, and marked with "…" (the whole value stays in the field).
local function label_of(name, text, tail)
  if not text then return name .. tail end
  local room = 235 - #name - 2 - #tail
  if #text > room then
    local n = room - 3
    if n < 1 then n = 1 end
    while n > 1 and sbyte(text, n + 1) and sbyte(text, n + 1) >= 0x80 and sbyte(text, n + 1) < 0xC0 do n = n - 1 end
    text = text:sub(1, n) .. "\226\128\166"
  end
  return name .. ": " .. text .. tail
end

local HEX = {}
for i = 0, 255 do HEX[i] = sfmt("%02x", i) end
local function hex(s, i, j)
  local t = {}
  for k = i, j do t[#t + 1] = HEX[sbyte(s, k)] end
  return concat(t)
end

-- Whether bytes i..j of s are UTF-8 as Rust's str::from_utf8 accepts it (no overlong forms, no
-- surrogates, nothing above U+10FFFF).
local function utf8_ok(s, i, j)
  local k = i
  while k <= j do
    local c = sbyte(s, k)
    if c < 0x80 then
      k = k + 1
    else
      local n, lo, hi
      if c >= 0xC2 and c <= 0xDF then n = 1; lo, hi = 0x80, 0xBF
      elseif c == 0xE0 then n = 2; lo, hi = 0xA0, 0xBF
      elseif (c >= 0xE1 and c <= 0xEC) or c == 0xEE or c == 0xEF then n = 2; lo, hi = 0x80, 0xBF
      elseif c == 0xED then n = 2; lo, hi = 0x80, 0x9F
      elseif c == 0xF0 then n = 3; lo, hi = 0x90, 0xBF
      elseif c >= 0xF1 and c <= 0xF3 then n = 3; lo, hi = 0x80, 0xBF
      elseif c == 0xF4 then n = 3; lo, hi = 0x80, 0x8F
      else return false end
      if k + n > j then return false end
      local c1 = sbyte(s, k + 1)
      if c1 < lo or c1 > hi then return false end
      for m = 2, n do
        local cm = sbyte(s, k + m)
        if cm < 0x80 or cm > 0xBF then return false end
      end
      k = k + n + 1
    end
  end
  return true
end

-- CRC-32/IEEE (zlib): `crc32(prev, s, i, j)` continues a finished CRC `prev` over bytes i..j.
local CRC = {}
for n = 0, 255 do
  local c = n
  for _ = 1, 8 do
    if c % 2 == 1 then c = bxor(floor(c / 2), 0xEDB88320) else c = floor(c / 2) end
  end
  CRC[n] = c
end
local function crc32(prev, s, i, j)
  local c = bxor(prev, 0xFFFFFFFF)
  for k = i, j do
    c = bxor(CRC[bxor(c % 256, sbyte(s, k))], floor(c / 256))
  end
  return bxor(c, 0xFFFFFFFF)
end

-- A value converted for a 64-bit ProtoField (numbers and the other 64-bit type are accepted,
-- as the same 64 bits: through hex, because Int64:lower() and :higher() give the parts of the
-- magnitude of a negative value, not of its two's complement).
local function to_i64(v)
  if type(v) == "number" then return Int64(v) end
  if typeof(v) == "Int64" then return v end
  return Int64.fromhex(v:tohex())
end
local function to_u64(v)
  if type(v) == "number" then return UInt64(v) end
  if typeof(v) == "UInt64" then return v end
  return UInt64.fromhex(v:tohex())
end

-- ---- shared by both readers ------------------------------------------------------------------

-- Path of `leaf` inside the current scope, as the trace and the error path spell it.
local function join(path, leaf)
  if leaf == "" then return path end
  if path == "" then return leaf end
  return path .. "." .. leaf
end

-- The name a field is shown under: its own, or an array element's label "[i]" (reader.idx).
local function name_of(reader, leaf)
  if leaf == "" then return reader.idx end
  return leaf
end

-- Marks the field where a read stopped.
local STOP = "  <- read stopped here"

-- A dissector's own field (status, error, ...), shown with its label.
local function meta(tree, pf, tvb, value, label)
  tree:add(pf, tvb(0, 0), value):set_text(label)
end

-- A datagram Wireshark did not capture whole (a fragment, or cut short) is not decoded: its
-- status is shown, and true returned.
local function unread(tvb, pinfo, root, status_pf)
  local status
  if pinfo.fragmented then
    status = "fragment"
  elseif tvb:len() < tvb:reported_len() then
    status = "truncated"
  end
  if not status then return false end
  meta(root, status_pf, tvb, status, "status: " .. status .. " (not decoded)")
  root:append_text(": " .. status)
  pinfo.cols.info = status
  return true
end
