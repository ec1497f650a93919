// The emulated DualSense's voice coils: haptics reports 0x32 decoded into the record (CRC checked, motors left
// alone), the FIFO playback model (when each report plays, underruns, streams, the last motion), and the
// measures kernel tests compare with the render (RMS, dominant frequency), all on synthetic reports.
import HapticRendering
import HapticTestDevices
import LinuxInput
import Testing

/// Frames of a sine of `frequency` Hz and peak `amplitude` (0...1) at 3000 Hz, from frame `first`.
private func sine(_ frequency: Double, amplitude: Double, frames: Int, first: Int = 0) -> [Int8] {
    (first..<(first + frames)).map { frame in
        DualSenseHapticsReport.sample(
            Float(amplitude * PureMath.sin(2 * PureMath.pi * frequency * Double(frame) / 3000)))
    }
}

/// A report whose left coil plays `left` and right coil `right` (32 frames each).
private func report(_ counter: UInt8, left: [Int8], right: [Int8]) -> DualSenseHapticsReport {
    DualSenseHapticsReport(counter: counter, samples: zip(left, right).flatMap { [$0, $1] })
}

/// A played packet of 32 frames, `value` on both coils.
private func packet(_ counter: Int, _ value: Int8 = 10) -> WaveformPacket {
    WaveformPacket(
        counter: counter, crcValid: true, left: [Int8](repeating: value, count: 32),
        right: [Int8](repeating: value, count: 32))
}

/// One report's duration, 32 / 3000 s.
private let reportSeconds = 32.0 / 3000

private func at(_ seconds: Double) -> PadTimestamp { PadTimestamp(seconds: seconds) }

@Suite("DualSense haptics reports")
struct DualSenseHapticsReportTests {
    @Test func aValidReportIsDecodedIntoBothCoilsAndLeavesTheMotorsAlone() {
        var pad = DualSense(transport: .bluetooth)
        let left = sine(200, amplitude: 0.5, frames: 32)
        let right = [Int8](repeating: -7, count: 32)
        let response = pad.receive(report(9, left: left, right: right).bytes, via: .interrupt)
        #expect(response.motors == nil)
        #expect(response.waveform == WaveformPacket(counter: 9, crcValid: true, left: left, right: right))
        #expect(response.waveform?.isPlayed == true)
    }

    @Test func aReportWithABadCRCIsRecordedAsSuchAndNotPlayed() {
        var pad = DualSense(transport: .bluetooth)
        var bytes = report(3, left: sine(200, amplitude: 1, frames: 32), right: []).bytes
        bytes[20] ^= 0x01
        let response = pad.receive(bytes, via: .interrupt)
        #expect(response.motors == nil)
        #expect(response.waveform == WaveformPacket(counter: 3, crcValid: false, left: nil, right: nil))
    }

    @Test func aSignedReportWithOtherSubPacketHeadersIsRefusedWithItsCRCValid() {
        var pad = DualSense(transport: .bluetooth)
        var bytes = report(4, left: [], right: []).bytes
        bytes[11] = 0x93
        PlayStationCRC.sign(&bytes, seed: PlayStationCRC.outputSeed)
        let waveform = pad.receive(bytes, via: .interrupt).waveform
        #expect(waveform == WaveformPacket(counter: 4, crcValid: true, left: nil, right: nil))
        #expect(waveform?.isPlayed == false)
    }

    @Test func theUSBModelTakesNoHapticsReport() {
        var pad = DualSense(transport: .usb)
        let response = pad.receive(report(1, left: [], right: []).bytes, via: .interrupt)
        #expect(response == .ignored)
    }

    @Test func aDecodedPacketRoundTripsThroughTheRecordsJSONLine() throws {
        let record = PadRecord(
            outputAt: PadTimestamp(microseconds: 12_345_678), report: [0x32, 0, 0], strong: 0, weak: 0,
            waveform: WaveformPacket(counter: 255, crcValid: true, left: [-128, 0, 127], right: [1, -1, 0]))
        let line = record.jsonLine()
        #expect(line.contains(#""waveform":{"counter":255,"crcValid":true,"left":[-128,0,127],"right":[1,-1,0]}"#))
        #expect(try PadRecord(jsonLine: line) == record)
        let refused = PadRecord(
            outputAt: PadTimestamp(microseconds: 1), report: [0x32], strong: 0, weak: 0,
            waveform: WaveformPacket(counter: 1, crcValid: false, left: nil, right: nil))
        #expect(refused.jsonLine().contains(#""waveform":{"counter":1,"crcValid":false}"#))
    }
}

@Suite("Voice-coil playback")
struct VoiceCoilPlaybackTests {
    @Test func reportsArrivingEarlyPlayBackToBackFromTheFirstArrival() {
        var playback = VoiceCoilPlayback()
        for counter in 0..<4 { playback.receive(packet(counter), at: at(10 + Double(counter) * 0.001)) }
        #expect(playback.played.map(\.counter) == [0, 1, 2, 3])
        for (index, report) in playback.played.enumerated() {
            #expect(abs(report.start - (10 + Double(index) * reportSeconds)) < 1e-9)
        }
        #expect(abs(playback.played[3].queued - (3 * reportSeconds - 0.003)) < 1e-9)
        #expect(playback.underruns.isEmpty)
        #expect(playback.streamStarts == [10])
    }

    @Test func aReportArrivingExactlyWhenTheFIFORunsDryIsNoUnderrun() {
        var playback = VoiceCoilPlayback()
        playback.receive(packet(0), at: at(1))
        let end = playback.end ?? 0
        playback.receive(packet(1), at: PadTimestamp(microseconds: Int64((end * 1e6).rounded(.down))))
        #expect(playback.underruns.isEmpty)
        #expect(playback.streamStarts.count == 1)
    }

    @Test func aReportLateWithinTheStreamGapIsAnUnderrunAndPlaysFromItsArrival() throws {
        var playback = VoiceCoilPlayback()
        playback.receive(packet(0), at: at(1))
        playback.receive(packet(1), at: at(1 + reportSeconds + 0.005))
        let underrun = try #require(playback.underruns.first)
        #expect(playback.underruns.count == 1)
        #expect(underrun.counter == 1)
        // Arrival times are the record's microseconds.
        #expect(abs(underrun.silence - 0.005) < 1e-6)
        #expect(abs(playback.played[1].start - (1 + reportSeconds + 0.005)) < 1e-6)
        #expect(playback.streamStarts == [1])
    }

    @Test func aReportAfterTheStreamGapStartsANewStreamWithoutAnUnderrun() {
        var playback = VoiceCoilPlayback()
        playback.receive(packet(0), at: at(1))
        playback.receive(packet(1), at: at(1 + reportSeconds + VoiceCoilPlayback.streamGap))
        #expect(playback.underruns.isEmpty)
        #expect(playback.streamStarts.count == 2)
        #expect(abs((playback.streamStarts.last ?? 0) - (1 + reportSeconds + VoiceCoilPlayback.streamGap)) < 1e-6)
    }

    @Test func refusedReportsPlayAsNothingAndDoNotFeedTheFIFO() {
        var playback = VoiceCoilPlayback()
        playback.receive(packet(0), at: at(1))
        playback.receive(WaveformPacket(counter: 1, crcValid: false, left: nil, right: nil), at: at(1.001))
        #expect(playback.refusedCount == 1)
        #expect(playback.played.map(\.counter) == [0])
        #expect(abs((playback.end ?? 0) - (1 + reportSeconds)) < 1e-9)
    }

    @Test func theLastMotionIsTheLastNonZeroSamplesPlayTimePerCoil() throws {
        var playback = VoiceCoilPlayback()
        var left = [Int8](repeating: 0, count: 32)
        left[5] = 40
        var right = [Int8](repeating: 0, count: 32)
        right[20] = -3
        playback.receive(WaveformPacket(counter: 0, crcValid: true, left: left, right: right), at: at(2))
        playback.receive(packet(1, 0), at: at(2.001))
        // Sample 5 of the packet at 2 s on the left, sample 20 on the right; each sample is 1/3000 s.
        let leftSample: Double = 2 + 5.0 / 3000
        let rightSample: Double = 2 + 20.0 / 3000
        let leftMotion: Double = try #require(playback.lastMotion(of: .left))
        let rightMotion: Double = try #require(playback.lastMotion(of: .right))
        let lastMotion: Double = try #require(playback.lastMotion())
        #expect(abs(leftMotion - leftSample) < 1e-9)
        #expect(abs(rightMotion - rightSample) < 1e-9)
        #expect(abs(lastMotion - rightSample) < 1e-9)
        #expect(VoiceCoilPlayback().lastMotion() == nil)
    }

    @Test func theWaveformPlacesEachReportAtItsStartWithSilenceInTheGaps() {
        var playback = VoiceCoilPlayback()
        playback.receive(packet(0, 127), at: at(1))
        playback.receive(packet(1, -127), at: at(1.001))
        // Starts 64 frames after the second report's end: a new stream.
        playback.receive(packet(2, 127), at: at(1 + 128.0 / 3000 + VoiceCoilPlayback.streamGap))
        let waveform = playback.waveform()
        #expect(abs(waveform.start - 1) < 1e-9)
        #expect(waveform.frameCount == 64 + 64 + 300 + 32)
        #expect(waveform.left[0..<32].allSatisfy { $0 == 1 })
        #expect(waveform.right[32..<64].allSatisfy { $0 == -1 })
        #expect(waveform.left[64..<428].allSatisfy { $0 == 0 })
        #expect(waveform.left[428..<460].allSatisfy { $0 == 1 })
        #expect(waveform.interleaved.prefix(4) == [1, 1, 1, 1])
        let tail = playback.waveform(from: 1 + 48.0 / 3000, through: 1 + 80.0 / 3000)
        #expect(tail.left == [Float](repeating: -1, count: 16) + [Float](repeating: 0, count: 16))
    }

    @Test func theRecordFeedsTheModelInOrderSkippingReportsWithoutWaveform() {
        let records = [
            PadRecord(outputAt: at(1), report: [0x31], strong: 0, weak: 0),
            PadRecord(outputAt: at(1.001), report: [0x32], strong: 0, weak: 0, waveform: packet(7)),
        ]
        let playback = VoiceCoilPlayback(records: records)
        #expect(playback.played.map(\.counter) == [7])
        #expect(abs((playback.played.first?.start ?? 0) - 1.001) < 1e-9)
    }

    @Test func discardingKeepsTheFIFOsEnd() {
        var playback = VoiceCoilPlayback()
        for counter in 0..<5 { playback.receive(packet(counter), at: at(1)) }
        let end = playback.end
        playback.discardPlayed(endingBefore: 100)
        #expect(playback.played.map(\.counter) == [4])
        #expect(playback.end == end)
    }
}

@Suite("Waveform analysis")
struct WaveformAnalysisTests {
    static func floats(_ samples: [Int8]) -> [Float] { samples.map(PlayedWaveform.level) }

    @Test(arguments: [0.25, 0.5, 1.0])
    func theRMSOfASineIsItsPeakOverRootTwo(amplitude: Double) {
        let rms = WaveformAnalysis.rms(Self.floats(sine(200, amplitude: amplitude, frames: 150)))
        #expect(abs(rms - amplitude / 2.0.squareRoot()) < 0.01)
    }

    /// 50 ms holds three cycles of 60 Hz: enough for the Hann-shaped window to resolve it.
    @Test(arguments: [60.0, 200, 333, 750, 1400])
    func theDominantFrequencyOfAFiftyMillisecondToneIsItsFrequency(hertz: Double) throws {
        let samples = Self.floats(sine(hertz, amplitude: 0.6, frames: 150, first: 17))
        let found = try #require(WaveformAnalysis.dominantFrequency(samples, sampleRate: 3000))
        #expect(abs(found - hertz) < 1, "found \(found) Hz")
    }

    @Test func aLowToneNeedsALongerWindow() throws {
        let samples = Self.floats(sine(25, amplitude: 0.6, frames: 1500))
        let found = try #require(WaveformAnalysis.dominantFrequency(samples, sampleRate: 3000))
        #expect(abs(found - 25) < 0.5, "found \(found) Hz")
    }

    @Test func theLouderOfTwoTonesDominates() throws {
        let low = sine(90, amplitude: 0.2, frames: 300)
        let high = sine(240, amplitude: 0.6, frames: 300)
        let samples = zip(low, high).map { Float($0) / 127 + Float($1) / 127 }
        #expect(abs(try #require(WaveformAnalysis.dominantFrequency(samples, sampleRate: 3000)) - 240) < 1)
    }

    @Test func silenceAndAConstantOffsetHaveNoDominantFrequency() {
        #expect(WaveformAnalysis.dominantFrequency([Float](repeating: 0, count: 150), sampleRate: 3000) == nil)
        #expect(WaveformAnalysis.dominantFrequency([Float](repeating: 0.4, count: 150), sampleRate: 3000) == nil)
        #expect(WaveformAnalysis.rms([Float]()) == 0)
    }

    @Test func windowsFollowAnEnvelopeAndAFrequencyStep() throws {
        // 0.1 s at 200 Hz, peak 0.8, then 0.1 s at 400 Hz, peak 0.2: four 50 ms windows.
        let samples = Self.floats(sine(200, amplitude: 0.8, frames: 300) + sine(400, amplitude: 0.2, frames: 300))
        let windows = WaveformAnalysis.windows(samples, sampleRate: 3000, start: 5, length: 0.05)
        #expect(windows.count == 4)
        let starts: [Double] = [5, 5.05, 5.1, 5.15]
        #expect(windows.map(\.start) == starts)
        let expected: [(hertz: Double, peak: Double)] = [(200, 0.8), (200, 0.8), (400, 0.2), (400, 0.2)]
        for (window, tone) in zip(windows, expected) {
            let rms: Double = tone.peak / 2.0.squareRoot()
            #expect(abs(window.rms - rms) < 0.01)
            let frequency: Double = try #require(window.dominantFrequency)
            #expect(abs(frequency - tone.hertz) < 1)
        }
    }

    @Test func aPlayedWaveformIsMeasuredPerCoil() throws {
        var playback = VoiceCoilPlayback()
        let left = sine(200, amplitude: 0.5, frames: 160)
        let right = sine(500, amplitude: 0.25, frames: 160)
        for index in 0..<5 {
            let frames = (index * 32)..<((index + 1) * 32)
            let bytes = report(
                UInt8(index), left: Array(left[frames]), right: Array(right[frames])
            ).bytes
            var pad = DualSense(transport: .bluetooth)
            let packet = try #require(pad.receive(bytes, via: .interrupt).waveform)
            playback.receive(packet, at: at(3 + Double(index) * 0.002))
        }
        let waveform = playback.waveform()
        let leftWindow = try #require(waveform.windows(.left, length: 0.05).first)
        let rightWindow = try #require(waveform.windows(.right, length: 0.05).first)
        #expect(abs(leftWindow.rms - 0.5 / 2.0.squareRoot()) < 0.01)
        #expect(abs(try #require(leftWindow.dominantFrequency) - 200) < 1)
        #expect(abs(rightWindow.rms - 0.25 / 2.0.squareRoot()) < 0.01)
        #expect(abs(try #require(rightWindow.dominantFrequency) - 500) < 1)
    }
}
