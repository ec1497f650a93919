// The DualSense's Bluetooth haptics report: its layout byte by byte, its CRC, the counter, the samples' place,
// and what a decoder refuses.
@testable import LinuxInput
import Testing

@Suite struct DualSenseHapticsReportTests {
    @Test func aReportHasTheIdHeadersCounterAndSamplesAtTheirOffsets() {
        let samples = (0..<64).map { Int8($0 - 32) }
        let bytes = DualSenseHapticsReport(counter: 0x25, samples: samples).bytes
        #expect(bytes.count == 142)
        #expect(bytes[0] == 0x32)
        #expect(bytes[1] == 0x50)
        #expect(Array(bytes[2...12]) == [0x91, 7, 0xfe, 0, 0, 0, 0, 0xff, 0x25, 0x92, 64])
        #expect(bytes[13..<77].map { Int8(bitPattern: $0) } == samples)
        #expect(bytes[77..<138].allSatisfy { $0 == 0 })
    }

    @Test func aReportEndsInTheOutputCRCOfTheByteA2AndItsBytes() {
        let bytes = DualSenseHapticsReport(counter: 1, samples: [1, -1]).bytes
        let stored = (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[138 + $1]) << (8 * UInt32($1)) }
        #expect(stored == PlayStationCRC.checksum(seed: 0xa2, bytes: bytes[..<138]))
        #expect(PlayStationCRC.isValid(bytes, seed: PlayStationCRC.outputSeed))
    }

    @Test func decodingGivesBackTheCounterAndBothChannels() {
        let samples = (0..<64).map { Int8(truncatingIfNeeded: $0 * 3) }
        let decoded = DualSenseHapticsReport(bytes: DualSenseHapticsReport(counter: 200, samples: samples).bytes)
        #expect(decoded?.counter == 200)
        #expect(decoded?.samples == samples)
        #expect(decoded?.left == stride(from: 0, to: 64, by: 2).map { samples[$0] })
        #expect(decoded?.right == stride(from: 1, to: 64, by: 2).map { samples[$0] })
    }

    @Test func shortSampleListsArePaddedWithSilenceAndLongOnesCut() {
        #expect(DualSenseHapticsReport(counter: 0, samples: [5]).samples == [5] + [Int8](repeating: 0, count: 63))
        #expect(DualSenseHapticsReport(counter: 0, samples: [Int8](repeating: 1, count: 70)).samples.count == 64)
    }

    @Test func decodingRefusesABadCRCAnotherIdAnotherLengthOrOtherHeaders() {
        let good = DualSenseHapticsReport(counter: 3, samples: [9, 9]).bytes
        var badCRC = good
        badCRC[20] ^= 1
        #expect(DualSenseHapticsReport(bytes: badCRC) == nil)
        var otherID = good
        otherID[0] = 0x31
        PlayStationCRC.sign(&otherID, seed: PlayStationCRC.outputSeed)
        #expect(DualSenseHapticsReport(bytes: otherID) == nil)
        #expect(DualSenseHapticsReport(bytes: Array(good.dropLast())) == nil)
        var otherHeader = good
        otherHeader[11] = 0x93
        PlayStationCRC.sign(&otherHeader, seed: PlayStationCRC.outputSeed)
        #expect(DualSenseHapticsReport(bytes: otherHeader) == nil)
        #expect(DualSenseHapticsReport(bytes: good) != nil)
    }

    @Test func samplesScaleBy127RoundAndClamp() {
        #expect(DualSenseHapticsReport.sample(1) == 127)
        #expect(DualSenseHapticsReport.sample(-1) == -127)
        #expect(DualSenseHapticsReport.sample(0.5) == 64)
        #expect(DualSenseHapticsReport.sample(3) == 127)
        #expect(DualSenseHapticsReport.sample(-.infinity) == 0)
        #expect(DualSenseHapticsReport.sample(.nan) == 0)
    }
}

@Suite struct DualSenseUSBReportTests {
    @Test func theAudioHapticsReportIsReport2WithEveryFlagClear() {
        let report = DualSenseUSBReport.audioHaptics
        #expect(report.count == 63 && report[0] == 0x02)
        #expect(report.dropFirst().allSatisfy { $0 == 0 })
    }
}
