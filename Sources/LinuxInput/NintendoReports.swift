// The HD rumble of Nintendo Switch controllers (Pro Controller, Joy-Cons), as bytes: what hid-nintendo sends and
// what we write ourselves through hidraw. Pure: bytes in, bytes out. The emulated Pro Controller decodes what it
// receives with the same code, so the format has one owner.
//
// Every output report 0x01 and 0x10 carries eight rumble bytes, four for the left actuator and four for the
// right. Each side drives one linear resonant actuator with two bands at once, a high band (82...1253 Hz) and a
// low band (41...626 Hz), each with its own amplitude:
//
//     byte 0: high-band frequency code bits 0...5 (in bits 2...7)
//     byte 1: bit 0 high-band frequency code bit 6, bits 1...7 high-band amplitude index (0...100)
//     byte 2: bits 0...6 low-band frequency code, bit 7 low-band amplitude index bit 0
//     byte 3: 0x40 + low-band amplitude index bits 1...6
//
// A frequency code c means round(10 * 2^(e / 32)) Hz with e = 0x60 + c (high band) or 0x40 + c (low band); an
// amplitude index selects one of 101 steps up to 1.003, the largest the published amplitude table marks safe
// for the actuators (and the most hid-nintendo sends). The rest state is `00 01 40 40`: both bands at amplitude
// 0 (at 320 and 160 Hz).

/// One actuator's four HD rumble bytes, decoded: the frequency and amplitude of its high and low bands.
package struct SwitchRumbleActuator: Sendable, Hashable {
    /// High-band frequency code, 0...127 (82...1253 Hz).
    package var highFrequencyCode: UInt8
    /// High-band amplitude index into `amplitudeSteps`, 0...127 (the driver sends 0...100).
    package var highAmplitudeIndex: UInt8
    /// Low-band frequency code, 0...127 (41...626 Hz; 40 Hz for code 0).
    package var lowFrequencyCode: UInt8
    /// Low-band amplitude index into `amplitudeSteps`, 0...127 (the driver sends 0...100).
    package var lowAmplitudeIndex: UInt8

    package init(
        highFrequencyCode: UInt8, highAmplitudeIndex: UInt8, lowFrequencyCode: UInt8, lowAmplitudeIndex: UInt8
    ) {
        self.highFrequencyCode = highFrequencyCode & 0x7f
        self.highAmplitudeIndex = highAmplitudeIndex & 0x7f
        self.lowFrequencyCode = lowFrequencyCode & 0x7f
        self.lowAmplitudeIndex = lowAmplitudeIndex & 0x7f
    }

    /// Decodes four rumble bytes (see the file header for the layout). A low-amplitude byte below 0x40,
    /// as in the all-zero rumble the driver sends before it first sets one, reads as silence.
    package init(bytes: [UInt8]) {
        let b = bytes + [UInt8](repeating: 0, count: max(0, 4 - bytes.count))
        let lowIndex = b[3] < 0x40 ? 0 : (b[3] - 0x40) << 1 | b[2] >> 7
        self.init(
            highFrequencyCode: b[0] >> 2 | (b[1] & 0x01) << 6, highAmplitudeIndex: b[1] >> 1,
            lowFrequencyCode: b[2] & 0x7f, lowAmplitudeIndex: lowIndex)
    }

    /// The four bytes that carry this state.
    package var bytes: [UInt8] {
        [
            (highFrequencyCode & 0x3f) << 2, highAmplitudeIndex << 1 | highFrequencyCode >> 6,
            lowFrequencyCode | (lowAmplitudeIndex & 0x01) << 7, 0x40 + lowAmplitudeIndex >> 1,
        ]
    }

    /// High-band frequency in Hz, as the driver's frequency table names it.
    package var highFrequency: Double { Self.frequency(exponent: 0x60 + Int(highFrequencyCode)) }
    /// Low-band frequency in Hz, as the driver's frequency table names it.
    package var lowFrequency: Double { Self.frequency(exponent: 0x40 + Int(lowFrequencyCode)) }
    /// High-band amplitude, 0...1 of the strongest step the driver sends.
    package var highAmplitude: Double { Self.level(highAmplitudeIndex) }
    /// Low-band amplitude, 0...1 of the strongest step the driver sends.
    package var lowAmplitude: Double { Self.level(lowAmplitudeIndex) }

    /// The amplitude steps in thousandths, by index: the controller's amplitude scale as the driver
    /// tabulates it. The last, 1003, is the most the driver sends (an FF magnitude of 0xffff).
    package static let amplitudeSteps: [Int] = [
        0, 10, 12, 14, 17, 20, 24, 28, 33, 40, 47, 56, 67, 80, 95, 112, 117, 123, 128, 134, 140,
        146, 152, 159, 166, 173, 181, 189, 198, 206, 215, 225, 230, 235, 240, 245, 251, 256, 262, 268, 273,
        279, 286, 292, 298, 305, 311, 318, 325, 332, 340, 347, 355, 362, 370, 378, 387, 395, 404, 413, 422,
        431, 440, 450, 460, 470, 480, 491, 501, 512, 524, 535, 547, 559, 571, 584, 596, 609, 623, 636, 650,
        665, 679, 694, 709, 725, 741, 757, 773, 790, 808, 825, 843, 862, 881, 900, 920, 940, 960, 981, 1003,
    ]

    /// The largest amplitude step (1003 thousandths): decoded levels are fractions of it.
    package static var maximumAmplitude: Int { amplitudeSteps[amplitudeSteps.count - 1] }

    /// 2^(1/32), from which every table frequency follows.
    private static let semitoneThirtySecond: Double = {
        var root = 2.0
        for _ in 0..<5 { root = root.squareRoot() }
        return root
    }()

    /// round(10 * 2^(exponent / 32)): the frequency, in whole Hz, that the driver's table lists for an
    /// exponent (0x41...0xdf over the codes it sends).
    package static func frequency(exponent: Int) -> Double {
        var value = 10.0
        for _ in 0..<(exponent / 32) { value *= 2 }
        for _ in 0..<(exponent % 32) { value *= semitoneThirtySecond }
        return (value + 0.5).rounded(.down)
    }

    /// An amplitude index as a 0...1 level; indices past the table (never sent by the driver) saturate.
    private static func level(_ index: UInt8) -> Double {
        Double(amplitudeSteps[min(Int(index), amplitudeSteps.count - 1)]) / Double(maximumAmplitude)
    }
}

/// The eight rumble bytes of an output report 0x01 or 0x10: the left actuator's four, then the right's.
package struct SwitchRumbleFrame: Sendable, Hashable {
    package var left: SwitchRumbleActuator
    package var right: SwitchRumbleActuator

    package init(left: SwitchRumbleActuator, right: SwitchRumbleActuator) {
        self.left = left
        self.right = right
    }

    /// Decodes eight rumble bytes, left actuator first.
    package init(bytes: [UInt8]) {
        let padded = bytes + [UInt8](repeating: 0, count: max(0, 8 - bytes.count))
        self.init(
            left: SwitchRumbleActuator(bytes: Array(padded[0..<4])),
            right: SwitchRumbleActuator(bytes: Array(padded[4..<8])))
    }

    /// The eight bytes that carry this state.
    package var bytes: [UInt8] { left.bytes + right.bytes }
}

extension SwitchRumbleActuator {
    /// One band of an actuator: a frequency in Hz and an amplitude, 0...1 of the largest safe step.
    package struct Band: Sendable, Hashable {
        package var frequency: Double
        package var amplitude: Double

        package init(frequency: Double, amplitude: Double) {
            self.frequency = frequency
            self.amplitude = amplitude
        }
    }

    /// The actuator at rest: `00 01 40 40`.
    package static let rest = SwitchRumbleActuator(bytes: [0x00, 0x01, 0x40, 0x40])

    /// The actuator playing `low` and `high`: each frequency as the nearest code of its band (clamped to the
    /// band), each amplitude as the nearest step, never above the largest (1.003). Bands that together ask for no
    /// more than the largest step (as `ActuatorBands.mixing` gives them) get steps that sum to no more than it
    /// either: the louder is taken a step down while they do (until 7 December each was rounded on its own, and
    /// 0.052 and 0.948 came to 1.016).
    package init(low: Band, high: Band) {
        var lowIndex = Self.amplitudeIndex(nearest: low.amplitude)
        var highIndex = Self.amplitudeIndex(nearest: high.amplitude)
        func sum() -> Int { Self.amplitudeSteps[Int(lowIndex)] + Self.amplitudeSteps[Int(highIndex)] }
        // With room for rounding: bands scaled down to sum to 1 (`ActuatorBands.mixing` divides both by their total)
        // may sum to a hair over it (1 + 2^-52), and were rounded each on its own until 7 December.
        if Self.clamped(low.amplitude) + Self.clamped(high.amplitude) <= 1 + 1e-9 {
            while sum() > Self.maximumAmplitude {
                if lowIndex > highIndex { lowIndex -= 1 } else { highIndex -= 1 }
            }
        }
        self.init(
            highFrequencyCode: Self.code(nearest: high.frequency, base: 0x60),
            highAmplitudeIndex: highIndex,
            lowFrequencyCode: max(1, Self.code(nearest: low.frequency, base: 0x40)),
            lowAmplitudeIndex: lowIndex)
    }

    /// An amplitude as `amplitudeIndex` reads it: 0 for anything not a positive number, 1 at most.
    private static func clamped(_ amplitude: Double) -> Double {
        amplitude.isFinite && amplitude > 0 ? min(amplitude, 1) : 0
    }

    /// Whether both bands are silent.
    package var isAtRest: Bool { highAmplitudeIndex == 0 && lowAmplitudeIndex == 0 }

    /// The code 0...127 whose table frequency is nearest `hertz` as a ratio (the band's ends for frequencies
    /// beyond it).
    package static func code(nearest hertz: Double, base: Int) -> UInt8 {
        guard !hertz.isNaN, hertz > 0 else { return 0 }
        // Infinity is past the band's top (until 7 December it was taken for its bottom).
        guard hertz.isFinite else { return 127 }
        var best = 0
        var bestRatio = Double.infinity
        for code in 0..<128 {
            let table = frequency(exponent: base + code)
            let ratio = max(table / hertz, hertz / table)
            if ratio < bestRatio {
                best = code
                bestRatio = ratio
            }
        }
        return UInt8(best)
    }

    /// The amplitude index 0...100 whose step is nearest `amplitude` (0...1 of the largest step), 0 for
    /// silence or anything not a positive number, 100 at most.
    package static func amplitudeIndex(nearest amplitude: Double) -> UInt8 {
        guard amplitude.isFinite, amplitude > 0 else { return 0 }
        let wanted = min(amplitude, 1) * Double(maximumAmplitude)
        var best = 0
        for index in amplitudeSteps.indices
        where abs(Double(amplitudeSteps[index]) - wanted) < abs(Double(amplitudeSteps[best]) - wanted) {
            best = index
        }
        return UInt8(best)
    }
}

/// Output report 0x10, rumble only: `[0x10, counter & 0x0f, left 4 bytes, right 4 bytes]`. The controller
/// expects the counter to advance by one with every report it is sent, wrapping at 16.
package struct SwitchRumbleReport: Sendable, Hashable {
    package static let reportID: UInt8 = 0x10
    package static let length = 10

    package var counter: UInt8
    package var frame: SwitchRumbleFrame

    package init(counter: UInt8, frame: SwitchRumbleFrame) {
        self.counter = counter & 0x0f
        self.frame = frame
    }

    /// Both actuators at rest.
    package static func rest(counter: UInt8) -> SwitchRumbleReport {
        SwitchRumbleReport(counter: counter, frame: SwitchRumbleFrame(left: .rest, right: .rest))
    }

    package var bytes: [UInt8] { [Self.reportID, counter] + frame.bytes }

    /// Parses a 0x10 report; nil for any other.
    package init?(bytes: [UInt8]) {
        guard bytes.count >= Self.length, bytes[0] == Self.reportID else { return nil }
        self.init(counter: bytes[1], frame: SwitchRumbleFrame(bytes: Array(bytes[2..<10])))
    }
}
