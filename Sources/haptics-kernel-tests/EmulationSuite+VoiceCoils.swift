// The emulated DualSense over Bluetooth hears haptics reports (0x32) written to its hidraw node beside
// hid-playstation: every report reaches the record decoded, and the voice coils' FIFO model plays them.
import AudioRendering
import Foundation
import Glibc
import HapticRendering
import HapticTestDevices
import LinuxAudio
import LinuxInput

extension EmulationSuite {
    /// Amplitudes (peak, 0...1) of the left coil's 200 Hz sine, one run of reports each; the right coil plays
    /// 300 Hz at half of it, so that a swap or a mix of the channels shows.
    static let coilAmplitudes = [0.25, 0.5, 1.0]
    static let reportsPerAmplitude = 24
    /// Reports written at once before pacing starts: the FIFO keeps this lead (64 ms), so a writer, or the
    /// emulator's thread that reads the reports and stamps their arrival, woken late on a busy bench still
    /// finds samples queued.
    static let coilLead = 6

    /// Hand-made 0x32 reports (a 200 Hz and a 300 Hz sine at three amplitudes, paced one report's duration
    /// apart after a lead of six), then one with a corrupted CRC, written to the pad's hidraw node through the
    /// bound hid-playstation. The record holds each one decoded: CRCs valid, counters in order, the last
    /// refused; the model plays them as one stream without a silence, an underrun or one long enough to start a
    /// stream of its own (a `TimingFailure`: a stall of the whole guest as long as the longest silence, over it,
    /// explains one); per 50 ms window in the middle of each
    /// run, each coil's dominant frequency is its sine's (within 2 Hz) and its RMS the sine's peak / sqrt 2
    /// (within 3 % + 0.005); the rumble motors stay at rest in every record.
    static func hapticsReportsPlayOnTheVoiceCoils() async throws {
        try await withController(.dualsenseBluetooth) { device, nodes in
            let hidraw = try openHidraw(besideEventNode: nodes.rumbleNode, under: nodes.sysfsPath)
            defer { hidraw.close() }
            let before = device.records().count
            let sent = coilAmplitudes.count * reportsPerAmplitude
            let first = monotonicSeconds()
            for index in 0..<sent {
                let due = first + Double(max(0, index - coilLead + 1)) * DualSenseHapticsReport.seconds
                let wait = due - monotonicSeconds()
                if wait > 0 { usleep(UInt32(wait * 1e6)) }
                let amplitude = coilAmplitudes[index / reportsPerAmplitude]
                try write(hidraw, sineReport(index, amplitude: amplitude).bytes)
            }
            var corrupted = sineReport(sent, amplitude: 1).bytes
            corrupted[DualSenseHapticsReport.size - 1] ^= 0xff
            try write(hidraw, corrupted)

            try await waitForOutputs(device, after: before, "\(sent + 1) haptics reports in the record") { outputs in
                outputs.filter { $0.waveform != nil }.count == sent + 1
            }
            let outputs = device.records().dropFirst(before).filter { $0.event == .output }
            let packets = outputs.compactMap(\.waveform)
            try requireEqual(packets.map(\.counter), (0...sent).map { $0 & 0xff }, "counters in the record")
            try require(packets.dropLast().allSatisfy { $0.crcValid && $0.isPlayed }, "a valid report was refused")
            try require(packets.last.map { !$0.crcValid && !$0.isPlayed } ?? false, "the corrupted report was played")
            try require(
                outputs.allSatisfy { $0.strong == 0 && $0.weak == 0 } && device.motors == .off,
                "the rumble motors moved: \(outputs.map { ($0.strong ?? 0, $0.weak ?? 0) }.filter { $0 != (0, 0) })")

            let playback = VoiceCoilPlayback(records: outputs)
            // The writer and the thread that reads the reports both run in the guest: coils silent for as long as
            // the whole guest stood still, then, is its doing. A silence of the model's stream gap or more is the
            // same, longer: the report after it starts a stream of its own rather than an underrun.
            let silences = zip(playback.played, playback.played.dropFirst()).compactMap { before, report in
                report.start > before.end
                    ? (counter: report.counter, arrival: report.arrival, silence: report.start - before.end) : nil
            }
            if let longest = silences.max(by: { $0.silence < $1.silence }) {
                throw TimingFailure(
                    reason: "the coils fell silent before report "
                        + silences.map { "\($0.counter) for \(AudioSuite.tenths($0.silence * 1000)) ms" }.joined(
                            separator: ", ")
                        + " (\(playback.underruns.count) underruns, \(playback.streamStarts.count) streams)",
                    explainingStall: longest.silence * 1000,
                    window: (longest.arrival - longest.silence)...longest.arrival)
            }
            try requireEqual(playback.refusedCount, 1, "refused reports")
            var measured: [String] = []
            for (run, amplitude) in coilAmplitudes.enumerated() {
                // The middle 20 reports of the run: four 50 ms windows.
                let start = playback.played[run * reportsPerAmplitude + 2].start
                let waveform = playback.waveform(from: start, through: start + 20 * DualSenseHapticsReport.seconds)
                for (coil, hertz, peak) in [(VoiceCoil.left, 200.0, amplitude), (.right, 300, amplitude / 2)] {
                    let windows = waveform.windows(coil, length: 0.05)
                    try requireEqual(windows.count, 4, "50 ms windows in run \(run)")
                    for window in windows {
                        let expected = peak / 2.0.squareRoot()
                        try require(
                            abs(window.rms - expected) <= 0.03 * expected + 0.005,
                            "\(coil) RMS \(window.rms) at amplitude \(peak), expected \(expected)")
                        try require(
                            window.dominantFrequency.map { abs($0 - hertz) <= 2 } ?? false,
                            "\(coil) dominant frequency \(String(describing: window.dominantFrequency)), expected \(hertz)"
                        )
                    }
                    if coil == .left {
                        measured.append(
                            "A \(amplitude): RMS \(rounded(windows.map(\.rms).max() ?? 0)), "
                                + "\(rounded(windows.compactMap(\.dominantFrequency).max() ?? 0)) Hz")
                    }
                }
            }
            let deepest = playback.played.map(\.queued).max() ?? 0
            print(
                "    \(sent) reports + 1 refused via \(hidraw.node), no underrun, deepest queue \(rounded(deepest * 1000)) ms; "
                    + measured.joined(separator: "; "))
        }
    }

    /// `haptics emulate dualsense-bt --haptics-wav FILE --record FILE`: ten reports written to the pad's hidraw
    /// node reach the record file decoded and the printed lines (report 9's left RMS near 0.35); on SIGTERM the
    /// command exits 0, says what it wrote and writes a 3000 Hz stereo WAV holding, sample for sample (within
    /// 16-bit rounding), what the FIFO model plays of the record file. The reports go at once, but when each
    /// arrives is when the emulator's thread read it, so the WAV may hold a gap of silence: the comparison with
    /// the model, not a frame count, is the check.
    static func cliWritesTheCoilsWAV() async throws {
        let wav = "/tmp/emulate-coils-\(getpid()).wav"
        let record = "/tmp/emulate-coils-\(getpid()).jsonl"
        defer {
            unlink(wav)
            unlink(record)
        }
        let emulator = try Subprocess([
            projectBinary("haptics"), "emulate", "dualsense-bt", "--haptics-wav", wav, "--record", record,
        ])
        let created = emulator.read(
            until: { $0.contains("created dualsense-bt") && $0.contains("\n") }, timeout: bindTimeout)
        try require(created, "haptics emulate printed no created line:\n\(emulator.text)")
        guard let line = emulator.text.split(separator: "\n").first(where: { $0.hasPrefix("created ") }),
            let event = line.split(separator: " ").first(where: { $0.hasPrefix("/dev/input/event") })
                .map({ String($0.filter { $0 != "," }) }),
            let node = HidrawDevice.node(besideEventNode: event)
        else { throw TestFailure(reason: "no hidraw node beside the rumble node in: \(emulator.text)") }
        do {
            let hidraw: HidrawDevice
            do { hidraw = try HidrawDevice(node: node, logger: logger()) } catch {
                throw TestFailure(reason: "opening \(node): \(error)")
            }
            defer { hidraw.close() }
            for index in 0..<10 { try write(hidraw, sineReport(index, amplitude: 0.5).bytes) }
        }
        let deadline = monotonicSeconds() + VirtualPadSuite.hangGuardSeconds
        while ((try? String(contentsOfFile: record, encoding: .utf8)) ?? "").split(separator: "\n")
            .filter({ $0.contains("\"waveform\"") }).count < 10
        {
            try require(monotonicSeconds() < deadline, "the record file did not reach 10 haptics reports")
            try await Task.sleep(for: .milliseconds(AppSuite.pollMilliseconds))
        }
        emulator.signal(SIGTERM)
        let status = emulator.finish(timeout: VirtualPadSuite.hangGuardSeconds)
        try require(status == 0, "haptics emulate exited \(status) on SIGTERM:\n\(emulator.text)")
        try require(
            emulator.text.contains("wrote \(wav): 10 haptics reports"), "no 'wrote' line:\n\(emulator.text)")
        try require(
            emulator.text.contains(" | haptics #9 left=0.3"), "no line of report 9's levels:\n\(emulator.text)")
        try require(
            emulator.text.split(separator: "\n").last?.hasPrefix("removed dualsense-bt") ?? false,
            "the last line is not 'removed dualsense-bt':\n\(emulator.text)")
        let records = try PadRecord.decodeLines(String(contentsOfFile: record, encoding: .utf8))
        try requireEqual(records.compactMap(\.waveform).map(\.counter), Array(0..<10), "counters in the record file")
        let played = VoiceCoilPlayback(records: records).waveform()
        let clip: AudioClip
        do { clip = try AudioFile.decode(wav) } catch { throw TestFailure(reason: "reading \(wav): \(error)") }
        try requireEqual(clip.sampleRate, 3000, "the WAV's sample rate")
        try requireEqual(clip.channelCount, 2, "the WAV's channels")
        try requireEqual(clip.frameCount, played.frameCount, "the WAV's frames vs the model's")
        let worst = zip(clip.samples, played.interleaved).map { abs($0 - min(max($1, -1), 1)) }.max() ?? 0
        try require(worst <= 1.0 / 32768 + 1e-6, "the WAV differs from the model's waveform by up to \(worst)")
        print("    \(wav): \(clip.frameCount) frames at 3000 Hz (320 played), equal to the model's waveform")
    }

    /// Report `index` of the test stream: 32 frames of the left coil's 200 Hz sine at `amplitude` and the right
    /// coil's 300 Hz at half of it, phase-continuous from report 0.
    static func sineReport(_ index: Int, amplitude: Double) -> DualSenseHapticsReport {
        let frames = (index * 32)..<((index + 1) * 32)
        let samples = frames.flatMap { frame -> [Int8] in
            let time = Double(frame) / Double(DualSenseHapticsReport.sampleRate)
            return [
                DualSenseHapticsReport.sample(Float(amplitude * PureMath.sin(2 * PureMath.pi * 200 * time))),
                DualSenseHapticsReport.sample(Float(amplitude / 2 * PureMath.sin(2 * PureMath.pi * 300 * time))),
            ]
        }
        return DualSenseHapticsReport(counter: UInt8(index & 0xff), samples: samples)
    }

    static func write(_ hidraw: HidrawDevice, _ report: [UInt8]) throws {
        do { try hidraw.write(report) } catch { throw TestFailure(reason: "writing to \(hidraw.node): \(error)") }
    }

    static func rounded(_ value: Double) -> String { String(format: "%.3f", value) }
}
