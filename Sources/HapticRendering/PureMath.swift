/// The transcendental functions the pure layers need, without the C library they do not import: powers of two,
/// powers, natural exponentials, sine and cosine, each from a short series after range reduction. Accurate to a
/// few units in the last place over the ranges the renderers use (checked against the C library in tests).
package enum PureMath {
    package static let pi = 3.141_592_653_589_793_2

    /// `value` within 0...1, NaN as 0 (`Swift.min` and `Swift.max` pass a NaN through, and a conversion of it to
    /// an integer traps).
    package static func unitClamped(_ value: Double) -> Double {
        value.isNaN ? 0 : Swift.min(Swift.max(value, 0), 1)
    }
    private static let ln2 = 0.693_147_180_559_945_3

    /// 2^x: the integer part sets the binary exponent, the fractional part comes from the series of e^(f ln 2).
    /// Total: NaN for NaN, infinity past Double's largest power of two, 0 below its smallest (an exponent out of
    /// `Int`'s range trapped, until 6 December).
    package static func exp2(_ x: Double) -> Double {
        guard !x.isNaN else { return .nan }
        if x >= 1024 { return .infinity }
        if x < -1100 { return 0 }
        let whole = x.rounded(.down)
        let fraction = x - whole
        var term = 1.0
        var sum = 1.0
        for n in 1...20 {
            term *= fraction * ln2 / Double(n)
            sum += term
        }
        return Double(sign: .plus, exponent: Int(whole), significand: 1) * sum
    }

    /// e^x.
    package static func exp(_ x: Double) -> Double { exp2(x / ln2) }

    /// x^y for positive x (0 for x <= 0): 2^(y log2 x).
    package static func pow(_ base: Double, _ exponent: Double) -> Double {
        guard base > 0 else { return 0 }
        return exp2(exponent * (Double(base.exponent) + log2(significand: base.significand)))
    }

    /// log2 x for positive x (-infinity for 0, NaN below): the binary exponent plus the significand's logarithm.
    package static func log2(_ x: Double) -> Double {
        guard x > 0 else { return x == 0 ? -.infinity : .nan }
        guard x.isFinite else { return x }
        return Double(x.exponent) + log2(significand: x.significand)
    }

    /// log2 of a value in [1, 2) (a significand) by the atanh series of ln.
    private static func log2(significand: Double) -> Double {
        let ratio = (significand - 1) / (significand + 1)
        let square = ratio * ratio
        var term = ratio
        var sum = 0.0
        var n = 1.0
        while n < 60 {
            sum += term / n
            term *= square
            n += 2
        }
        return 2 * sum / ln2
    }

    /// sin x: reduced to [-pi/2, pi/2] (sin(pi - x) = sin x), then the Taylor series to x^25.
    package static func sin(_ x: Double) -> Double {
        guard x.isFinite else { return .nan }
        let turns = (x / (2 * pi)).rounded()
        var reduced = x - turns * 2 * pi
        if reduced > pi / 2 { reduced = pi - reduced }
        if reduced < -pi / 2 { reduced = -pi - reduced }
        let square = reduced * reduced
        var term = reduced
        var sum = reduced
        var n = 1.0
        while n < 25 {
            term *= -square / ((n + 1) * (n + 2))
            sum += term
            n += 2
        }
        return sum
    }

    /// cos x = sin(x + pi/2).
    package static func cos(_ x: Double) -> Double { sin(x + pi / 2) }
}
