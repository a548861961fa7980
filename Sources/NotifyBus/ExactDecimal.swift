/// A number's exact value: `sign × digits × 10^exponent`, in a single form per value, so
/// that two numbers are equal exactly when their forms are.
///
/// `digits` has no leading or trailing zeros (empty for zero, which is never negative);
/// `exponent` is a whole number of any size (a JSON exponent may have any number of digits).
struct ExactDecimal: Hashable {
    var negative = false
    /// Decimal digits, most significant first.
    var digits: [UInt8] = []
    var exponent = BigInteger()

    /// The value of JSON number text (already checked against the grammar).
    init(numberText text: String) {
        let bytes = Array(text.utf8)
        var i = 0
        var isNegative = false
        if i < bytes.count, bytes[i] == UInt8(ascii: "-") { isNegative = true; i += 1 }
        var mantissa: [UInt8] = []
        var fractionDigits = 0
        var inFraction = false
        while i < bytes.count, bytes[i] != UInt8(ascii: "e"), bytes[i] != UInt8(ascii: "E") {
            if bytes[i] == UInt8(ascii: ".") {
                inFraction = true
            } else {
                mantissa.append(bytes[i] &- 0x30)
                if inFraction { fractionDigits += 1 }
            }
            i += 1
        }
        var written = BigInteger()
        if i < bytes.count {
            i += 1
            var expNegative = false
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") {
                expNegative = bytes[i] == UInt8(ascii: "-"); i += 1
            }
            written = BigInteger(negative: expNegative, digits: bytes[i...].map { $0 &- 0x30 })
        }
        self.init(negative: isNegative, mantissa: mantissa, exponent: written.adding(-fractionDigits))
    }

    /// The value of an integer.
    init(_ value: Int64) {
        self.init(negative: value < 0, mantissa: Self.decimalDigits(value.magnitude), exponent: BigInteger())
    }

    /// The exact value of a finite `Double` (`nil` for infinities and NaN).
    init?(_ value: Double) {
        guard value.isFinite else { return nil }
        guard value != 0 else { self.init(); return }
        // value = m × 2^p with m an integer below 2^53.
        let m = UInt64(value.significand.magnitude * 0x1p52)
        let p = Int(value.exponent) - 52
        var limbs = DecimalLimbs(m)
        if p >= 0 {
            limbs.multiply(byPowerOf: 2, count: p)
            self.init(negative: value < 0, mantissa: limbs.digits, exponent: BigInteger())
        } else {
            // m × 2^p = m × 5^-p × 10^p
            limbs.multiply(byPowerOf: 5, count: -p)
            self.init(negative: value < 0, mantissa: limbs.digits, exponent: BigInteger(p))
        }
    }

    init() {}

    /// Normalizes `mantissa × 10^exponent`.
    private init(negative: Bool, mantissa: [UInt8], exponent: BigInteger) {
        guard let first = mantissa.firstIndex(where: { $0 != 0 }), let last = mantissa.lastIndex(where: { $0 != 0 })
        else { return }
        self.negative = negative
        self.digits = Array(mantissa[first...last])
        self.exponent = exponent.adding(mantissa.count - 1 - last)
    }

    /// The value as an `Int64`, when it is a whole number in its range.
    var int64Value: Int64? {
        guard let e = exponent.smallValue, e >= 0, digits.count + e <= 19 else { return digits.isEmpty ? 0 : nil }
        var magnitude: UInt64 = 0
        for d in digits + Array(repeating: 0, count: e) {
            let (times10, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(UInt64(d))
            if o1 || o2 { return nil }
            magnitude = sum
        }
        if negative { return magnitude <= UInt64(Int64.max) + 1 ? Int64(truncatingIfNeeded: 0 &- magnitude) : nil }
        return Int64(exactly: magnitude)
    }

    static func decimalDigits(_ value: UInt64) -> [UInt8] {
        value == 0 ? [] : String(value).utf8.map { $0 &- 0x30 }
    }
}

/// A whole number of any size, as a sign and decimal digits: enough to add two exponents.
struct BigInteger: Hashable {
    var negative = false
    /// Most significant first, no leading zeros; empty for zero.
    var digits: [UInt8] = []

    init() {}

    init(_ value: Int) {
        negative = value < 0
        digits = ExactDecimal.decimalDigits(UInt64(value.magnitude))
    }

    init(negative: Bool, digits: [UInt8]) {
        let trimmed = Array(digits.drop(while: { $0 == 0 }))
        self.negative = negative && !trimmed.isEmpty
        self.digits = trimmed
    }

    /// The value as an `Int`, when it has at most 18 digits.
    var smallValue: Int? {
        guard digits.count <= 18 else { return nil }
        let magnitude = digits.reduce(0) { $0 * 10 + Int($1) }
        return negative ? -magnitude : magnitude
    }

    func adding(_ other: Int) -> BigInteger {
        let o = BigInteger(other)
        if o.digits.isEmpty { return self }
        if negative == o.negative { return BigInteger(negative: negative, digits: Self.sum(digits, o.digits)) }
        if Self.lessThan(digits, o.digits) { return BigInteger(negative: o.negative, digits: Self.difference(o.digits, digits)) }
        return BigInteger(negative: negative, digits: Self.difference(digits, o.digits))
    }

    private static func lessThan(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.count != b.count ? a.count < b.count : a.lexicographicallyPrecedes(b)
    }

    private static func sum(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var carry: UInt8 = 0
        var i = a.count - 1, j = b.count - 1
        while i >= 0 || j >= 0 || carry > 0 {
            let s = (i >= 0 ? a[i] : 0) + (j >= 0 ? b[j] : 0) + carry
            out.append(s % 10)
            carry = s / 10
            i -= 1; j -= 1
        }
        return out.reversed()
    }

    /// `a - b` for `a >= b`.
    private static func difference(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var borrow: Int = 0
        var j = b.count - 1
        for i in stride(from: a.count - 1, through: 0, by: -1) {
            var d = Int(a[i]) - borrow - (j >= 0 ? Int(b[j]) : 0)
            borrow = d < 0 ? 1 : 0
            if d < 0 { d += 10 }
            out.append(UInt8(d))
            j -= 1
        }
        return out.reversed()
    }
}

/// A whole number in base 10^9 limbs (least significant first), for the exact decimal
/// expansion of a `Double`.
struct DecimalLimbs {
    static let base: UInt64 = 1_000_000_000
    var limbs: [UInt64]

    init(_ value: UInt64) {
        limbs = [value % Self.base, (value / Self.base) % Self.base, value / (Self.base * Self.base)]
    }

    /// Multiplies by `factor^count` (`factor` 2 or 5), in steps that keep every product in 64 bits.
    mutating func multiply(byPowerOf factor: UInt64, count: Int) {
        let stepCount = factor == 2 ? 29 : 13  // 2^29, 5^13 < 2^31
        var left = count
        while left > 0 {
            let n = min(left, stepCount)
            var multiplier: UInt64 = 1
            for _ in 0..<n { multiplier *= factor }
            var carry: UInt64 = 0
            for k in limbs.indices {
                let product = limbs[k] * multiplier + carry
                limbs[k] = product % Self.base
                carry = product / Self.base
            }
            while carry > 0 { limbs.append(carry % Self.base); carry /= Self.base }
            left -= n
        }
    }

    /// Decimal digits, most significant first (leading zeros included).
    var digits: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(limbs.count * 9)
        for limb in limbs.reversed() {
            var chunk = [UInt8](repeating: 0, count: 9)
            var v = limb
            for k in stride(from: 8, through: 0, by: -1) { chunk[k] = UInt8(v % 10); v /= 10 }
            out += chunk
        }
        return out
    }
}
