// Reports a PlayStation controller takes over Bluetooth that we write ourselves: the CRC every Bluetooth report
// ends in, and the DualSense's haptics report 0x32, which carries the voice coils' waveform (32 frames of
// signed 8-bit stereo at 3 kHz). Pure: bytes in, bytes out. The emulated controllers use the same code to check
// and decode what they receive, so the format has one owner.

/// The CRC32 that PlayStation controllers append to Bluetooth reports: the standard reflected CRC-32 over one
/// header byte that says the report's direction, then the report's bytes from its id on.
package enum PlayStationCRC {
    /// Header byte of reports the controller sends (input reports).
    package static let inputSeed: UInt8 = 0xa1
    /// Header byte of reports the host sends (output reports).
    package static let outputSeed: UInt8 = 0xa2
    /// Header byte of feature reports the controller answers.
    package static let featureSeed: UInt8 = 0xa3

    /// The CRC of `seed` followed by `bytes`.
    package static func checksum(seed: UInt8, bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc = update(0xffff_ffff, with: seed)
        for byte in bytes { crc = update(crc, with: byte) }
        return ~crc
    }

    /// Writes the CRC of everything before the last four bytes into them, least significant byte first.
    package static func sign(_ report: inout [UInt8], seed: UInt8) {
        let end = report.count - 4
        let crc = checksum(seed: seed, bytes: report[..<end])
        for index in 0..<4 { report[end + index] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(index))) }
    }

    /// Whether the last four bytes hold the CRC of the bytes before them.
    package static func isValid(_ report: [UInt8], seed: UInt8) -> Bool {
        guard report.count > 4 else { return false }
        let end = report.count - 4
        let stored = (0..<4).reduce(UInt32(0)) { $0 | UInt32(report[end + $1]) << (8 * UInt32($1)) }
        return stored == checksum(seed: seed, bytes: report[..<end])
    }

    private static let table: [UInt32] = (0..<256).map { index in
        var crc = UInt32(index)
        for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xedb8_8320 : crc >> 1 }
        return crc
    }

    private static func update(_ crc: UInt32, with byte: UInt8) -> UInt32 {
        table[Int((crc ^ UInt32(byte)) & 0xff)] ^ (crc >> 8)
    }
}

/// The DualSense's Bluetooth haptics report (id 0x32, 142 bytes with the id): a header byte, a sub-packet
/// `0x91` (id 0x11 with the "sized" bit) of 7 bytes ending in a counter the pad expects to grow by one per
/// report, a sub-packet `0x92` (id 0x12, sized) of 64 bytes holding 32 frames of interleaved signed 8-bit stereo
/// PCM at 3000 Hz (left actuator first), zeros, and the output CRC in the last four bytes.
package struct DualSenseHapticsReport: Sendable, Hashable {
    package static let id: UInt8 = 0x32
    /// Bytes with the id and the CRC.
    package static let size = 142
    package static let framesPerReport = 32
    package static let sampleRate = 3000
    /// The seconds of waveform one report carries (32 frames at 3 kHz: 10.67 ms).
    package static var seconds: Double { Double(framesPerReport) / Double(sampleRate) }

    static let controlHeader: UInt8 = 0x91
    static let controlLength: UInt8 = 7
    static let samplesHeader: UInt8 = 0x92
    static let samplesOffset = 13

    /// The report's place in the stream (the pad's counter, byte 10).
    package var counter: UInt8
    /// 64 samples: left, right, frame after frame.
    package var samples: [Int8]

    /// A report carrying `samples` (interleaved stereo; fewer than 64 are padded with silence, more are cut).
    package init(counter: UInt8, samples: [Int8]) {
        self.counter = counter
        let count = 2 * Self.framesPerReport
        self.samples = Array(samples.prefix(count)) + [Int8](repeating: 0, count: max(0, count - samples.count))
    }

    /// The left actuator's samples.
    package var left: [Int8] { stride(from: 0, to: samples.count, by: 2).map { samples[$0] } }
    /// The right actuator's samples.
    package var right: [Int8] { stride(from: 1, to: samples.count, by: 2).map { samples[$0] } }

    /// The bytes written to the pad's hidraw node, signed.
    package var bytes: [UInt8] {
        var report = [UInt8](repeating: 0, count: Self.size)
        report[0] = Self.id
        report[1] = (counter & 0x0f) << 4
        report[2] = Self.controlHeader
        report[3] = Self.controlLength
        report[4...10] = [0xfe, 0, 0, 0, 0, 0xff, counter]
        report[11] = Self.samplesHeader
        report[12] = UInt8(2 * Self.framesPerReport)
        for (index, sample) in samples.enumerated() {
            report[Self.samplesOffset + index] = UInt8(bitPattern: sample)
        }
        PlayStationCRC.sign(&report, seed: PlayStationCRC.outputSeed)
        return report
    }

    /// The report `bytes` carries, or nil when they are not a haptics report the pad would take: another id or
    /// length, a CRC that does not check, or sub-packet headers other than the two above.
    package init?(bytes: [UInt8]) {
        guard bytes.count == Self.size, bytes[0] == Self.id,
            bytes[2] == Self.controlHeader, bytes[3] == Self.controlLength,
            bytes[11] == Self.samplesHeader, Int(bytes[12]) == 2 * Self.framesPerReport,
            PlayStationCRC.isValid(bytes, seed: PlayStationCRC.outputSeed)
        else { return nil }
        counter = bytes[10]
        samples = bytes[Self.samplesOffset..<(Self.samplesOffset + 2 * Self.framesPerReport)].map {
            Int8(bitPattern: $0)
        }
    }

    /// A sample in -1...1 as the pad's signed byte: scaled by 127 and rounded; out of range clamps.
    package static func sample(_ value: Float) -> Int8 {
        guard value.isFinite else { return 0 }
        return Int8((min(max(value, -1), 1) * 127).rounded())
    }
}

/// The DualSense's USB output report (id 0x02, 63 bytes with the id) with every "valid" flag clear: the pad
/// changes nothing it would otherwise set (motors, lights), and leaves the rumble emulation that hid-playstation's
/// rumble reports select ("haptics select"), so that its voice coils play its sound card's channels 3 and 4
/// again.
package enum DualSenseUSBReport {
    package static let id: UInt8 = 0x02
    package static let size = 63

    /// The report that hands the voice coils back to the sound card.
    package static var audioHaptics: [UInt8] { [id] + [UInt8](repeating: 0, count: size - 1) }
}
