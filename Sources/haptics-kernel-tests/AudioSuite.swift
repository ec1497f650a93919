// Sound through a real ALSA driver: snd-aloop's loopback card, whose capture side (device 1) hears what its
// playback side (device 0) plays, sample for sample when both run the same format. A rendered tone played
// through our ALSA output must come back as rendered; a real underrun and injected stream errors must be
// recovered, and a device gone reported.
import AHAP
import AudioRendering
import LinuxAudio
import LinuxInput
import Logging

enum AudioSuite {
    static let suite = KernelTestSuite(
        name: "audio", requiredPaths: ["/proc/asound/Loopback"],
        tests: [
            KernelTest(name: "audio/loopback-hears-the-rendered-tone", body: loopbackTone),
            KernelTest(name: "audio/stream-errors-recovered-or-reported", body: streamErrors),
        ])

    static let playbackDevice = "hw:Loopback,0,0"
    static let captureDevice = "hw:Loopback,1,0"
    static let rate = 48_000

    static func logger() -> Logger {
        var logger = Logger(label: "kernel-tests.audio")
        logger.logLevel = .error
        return logger
    }

    /// A 0.2 s tone at volume 0.8 after 50 ms of silence, as the mixer renders it.
    static func renderedTone() -> [Float] {
        let tone = HapticEvent(
            type: .audioContinuous, parameters: [HapticEventParameter(parameterID: .audioVolume, value: 0.8)],
            relativeTime: 0.05, duration: 0.2)
        var mixer = AudioMixer(
            schedule: AudioSchedule(pattern: HapticPattern(events: [tone], parameters: [], parameterCurves: [])),
            clips: [:], sampleRate: Double(rate))
        var frames = [Float](repeating: 0, count: 2 * rate * 3 / 10)
        mixer.render(into: &frames)
        return frames
    }

    /// The first frame whose left sample stands out of silence.
    static func onset(_ samples: [Float], from start: Int = 0) -> Int? {
        stride(from: 2 * start, to: samples.count, by: 2).first { abs(samples[$0]) > 0.02 }.map { $0 / 2 }
    }

    static func loopbackTone() async throws {
        let rendered = renderedTone()
        let capture = try PCM(device: captureDevice, direction: .capture, sampleRate: rate, bufferSeconds: 0.5)
        defer { capture.close() }
        let captured = Lock<Result<[Float], AudioDeviceError>?>(nil)
        let frames = rendered.count / 2 + rate / 4
        let captureStart = MonotonicTime.nanoseconds()
        try capture.start()
        let reader = try ServiceThread.start {
            var buffer = [Float](repeating: 0, count: 2 * frames)
            let result = Result { () throws(AudioDeviceError) in
                try buffer.withUnsafeMutableBufferPointer { (pointer) throws(AudioDeviceError) in
                    try capture.read(into: pointer) { _ in }
                }
                return buffer
            }
            captured.withLock { $0 = result }
        }
        let output = try ALSAOutput(device: playbackDevice, sampleRate: rate, bufferSeconds: 0.04, logger: logger())
        defer { output.close() }
        let before = MonotonicTime.nanoseconds()
        let heard = try output.write(rendered)
        try output.drain()
        reader.join()
        let samples = try (captured.withLock { $0 })?.get() ?? []
        print("  output \(output.latency); first frame due \(tenths(Double(heard - before) / 1e6)) ms after the write")
        let onsetFrame = try check(samples, against: rendered, xruns: output.xrunCount)
        // When the capture heard the tone start, against when the output said it would be heard (the capture's
        // first frame taken as recorded at the moment it was started): for the record, not a requirement.
        let dueMilliseconds = Double(heard - captureStart) / 1e6 + Double(onset(rendered) ?? 0) * 1000 / Double(rate)
        let heardMilliseconds = Double(onsetFrame) * 1000 / Double(rate)
        print("  onset heard \(tenths(heardMilliseconds - dueMilliseconds)) ms after the time the output gave")
    }

    /// The capture must hold the rendered sound whole: its onset found, then every sample as rendered.
    /// `value` rounded to one decimal, for the printed figures.
    static func tenths(_ value: Double) -> Double { (value * 10).rounded() / 10 }

    /// Returns the capture's onset frame.
    static func check(_ captured: [Float], against rendered: [Float], xruns: Int) throws -> Int {
        try requireEqual(xruns, 0, "underruns while playing")
        guard let renderedOnset = onset(rendered), let capturedOnset = onset(captured) else {
            throw TestFailure(reason: "no tone in the capture (\(captured.count / 2) frames, all below 0.02)")
        }
        let shift = capturedOnset - renderedOnset
        try require(shift >= 0, "the capture's onset (frame \(capturedOnset)) precedes the rendered one")
        let toneFrames = rendered.count / 2 - renderedOnset
        try require(captured.count / 2 >= capturedOnset + toneFrames, "the capture ends before the tone does")
        var worst: Float = 0
        var power = (captured: 0.0, rendered: 0.0)
        for index in 2 * renderedOnset..<rendered.count {
            let heard = captured[index + 2 * shift]
            worst = max(worst, abs(heard - rendered[index]))
            power.captured += Double(heard * heard)
            power.rendered += Double(rendered[index] * rendered[index])
        }
        let level = (power.captured / power.rendered).squareRoot()
        print("  onset at capture frame \(capturedOnset), level \(level) of the rendered, largest difference \(worst)")
        try require(worst < 1e-6, "the captured tone differs from the rendered one by up to \(worst)")
        try require(onset(captured, from: capturedOnset + toneFrames) == nil, "sound after the tone ended")
        return capturedOnset
    }

    static func streamErrors() async throws {
        let output = try ALSAOutput(device: playbackDevice, sampleRate: rate, bufferSeconds: 0.04, logger: logger())
        defer { output.close() }
        let block = [Float](repeating: 0, count: 2 * 480)
        defer { SyscallFaults.disarm() }
        // A real underrun: the stream runs dry while nothing is written for longer than its buffer lasts.
        try output.write(block)
        Sys.sleep(nanoseconds: 150_000_000)
        try output.write(block)
        try requireEqual(output.xrunCount, 1, "underruns recovered after a pause longer than the buffer")
        // Injected errors, each on a drained (prepared) stream, the state in which a real one leaves it ready to
        // be prepared again: a suspend seen by a write, an underrun seen by the queue's length.
        for site in ["snd_pcm_writei", "snd_pcm_delay"] {
            try output.drain()
            SyscallFaults.arm(
                .init(site: site, errno: site == "snd_pcm_writei" ? .streamSuspended : .brokenPipe, calls: .nth(1)))
            if site == "snd_pcm_writei" { try output.write(block) } else { _ = try output.delay() }
            try requireEqual(SyscallFaults.disarm().injected, 1, "the error injected at \(site)")
        }
        try requireEqual(output.xrunCount, 3, "stream errors recovered (underrun, suspend, underrun seen by delay)")

        SyscallFaults.arm(.init(site: "snd_pcm_writei", errno: .noDevice, calls: .from(1)))
        do {
            try output.write(block)
            throw TestFailure(reason: "a write to a device gone (ENODEV) should throw")
        } catch let error as AudioDeviceError {
            try require(error.isDeviceMissing && error.call == "snd_pcm_writei", "the error for ENODEV: \(error)")
        }
        SyscallFaults.disarm()
        try output.write(block)
        try output.drain()
    }
}
