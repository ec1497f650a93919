// Sound through a real ALSA driver: snd-aloop's loopback card, whose capture side (device 1) hears what its
// playback side (device 0) plays, sample for sample when both run the same format. A rendered tone played
// through our ALSA output must come back as rendered; a real underrun and injected stream errors must be
// recovered, and a device gone reported.
import AHAP
import AudioRendering
import HapticRendering
import HapticTestDevices
import LinuxHaptics
import LinuxAudio
import LinuxInput
import Logging
@_spi(Internals) import LinuxSystem

enum AudioSuite {
    static let suite: KernelTestSuite = KernelTestSuite(
        name: "audio", requires: [.sndAloop],
        tests: [
            KernelTest(name: "audio/devices-list-the-loopback-card", body: deviceList),
            KernelTest(name: "audio/loopback-hears-the-rendered-tone") {
                try await againAfterAGuestStall(loopbackTone)
            },
            KernelTest(name: "audio/scheduled-sound-heard-whole") { try await againAfterAGuestStall(scheduledSound) },
            KernelTest(name: "audio/cross-fade-keeps-power-without-a-gap") {
                try await againAfterAGuestStall(crossFade)
            },
            KernelTest(name: "audio/stream-errors-recovered-or-reported", body: streamErrors),
            KernelTest(name: "audio/dualsense-usb-voice-coils-on-channels-3-and-4-sample-for-sample") {
                try await againAfterAGuestStall(voiceCoilChannels)
            },
            KernelTest(
                name: "audio/dualsense-usb-voice-coils-on-a-card-held-without-a-sound-server-say-why",
                body: voiceCoilCardHeldWithoutServer),
            KernelTest(
                name: "audio/dualsense-usb-voice-coils-through-the-sound-server-that-holds-the-card"
            ) { try await againAfterAGuestStall(voiceCoilsThroughSoundServer) },
            // Last: it unbinds the card and binds it again.
            KernelTest(name: "audio/stream-waits-for-the-card-to-come-back", body: cardComesBack),
        ])

    static let playbackDevice = LoopbackCapture.playbackDevice
    static let captureDevice = LoopbackCapture.captureDevice
    static let rate = 48_000
    /// The playback buffer of the tests that compare a capture sample for sample. snd-aloop copies whatever its
    /// playback ring holds at its position, and under emulation its timer can fire late and carry that position
    /// past what was written before the underrun is noticed: stale frames then reach the capture (seen as one
    /// 40 ms buffer of the tone heard twice, no underrun reported, twice in about thirty runs on a loaded host
    /// with a 40 ms buffer). A 100 ms buffer keeps the writer further ahead, and the patterns end in more silence
    /// than the buffer holds, so that what is stale when playing stops is silence.
    static let captureSafeBuffer = 0.1

    /// The start of the reason `check` gives for underruns.
    static let underrunReason = "underruns while playing"

    /// How long the whole guest must have stood still for an underrun to be its doing: half the playback buffer
    /// the writer keeps ahead (`captureSafeBuffer`).
    static let stallExcusingAnUnderrun = captureSafeBuffer * 1000 / 2

    /// The least the kernel waits for a drain before it stops the stream and answers `EIO`.
    static let drainTimeoutMilliseconds = 100.0

    /// The start of the reason `check` gives for a tone that came back other than rendered.
    static let differenceReason = "the captured tone differs from the rendered one"

    /// How long the whole guest must have stood still for a tone heard other than rendered, with no underrun
    /// reported, to be its doing: the least the writer keeps queued, the buffer less one of its four periods.
    /// snd-aloop moves its position by the time its timer was late and copies that much of the playback ring to
    /// the capture: past what was written, the ring's stale frames. A stall longer than the whole buffer moves the
    /// position past its wrap, and ALSA's core, which reads the position in the ring, then sees no underrun (seen
    /// under 150 ms stops of the emulator: the tone overlaid with stale frames, level 1.11, no underrun).
    static let stallExcusingADifference = captureSafeBuffer * 1000 * 3 / 4

    /// Runs `body`, a playback checked sample for sample, and runs it again, at most twice, when it failed on an
    /// underrun while a `StallWitness` saw the whole guest stand still for `stallExcusingAnUnderrun` or longer,
    /// or on a tone heard other than rendered after a stall of `stallExcusingADifference`, or on a drain that timed
    /// out after one of `drainTimeoutMilliseconds`: the writer could not have run then either
    /// (`StallWitness.againAfterAGuestStall`). Any of them with no such stall still fails, and so does any other
    /// failure.
    static func againAfterAGuestStall(_ body: () async throws -> Void) async throws {
        try await StallWitness.againAfterAGuestStall {
            do { try await body() } catch let failure as TestFailure where failure.reason.hasPrefix(underrunReason) {
                throw TimingFailure(reason: failure.reason, explainingStall: stallExcusingAnUnderrun)
            } catch let failure as TestFailure where failure.reason.hasPrefix(differenceReason) {
                throw TimingFailure(reason: failure.reason, explainingStall: stallExcusingADifference)
            } catch let error as AudioDeviceError where error.call == "snd_pcm_drain" && error.errno == .ioError {
                // The kernel's wait for the drain timed out (it waits at least 100 ms, and the buffer's length and a
                // tenth) and stopped the stream: the whole guest stood still at least that long.
                throw TimingFailure(reason: "\(error)", explainingStall: drainTimeoutMilliseconds)
            }
        }
    }

    static func logger() -> Logger {
        var logger = Logger(label: "kernel-tests.audio")
        logger.logLevel = .error
        return logger
    }

    /// A 0.2 s tone at volume 0.8 after 50 ms of silence, then 150 ms of silence (a tone at volume 0): snd-aloop
    /// loses the last period a playback stream drains, and repeats stale ring frames when playing stops
    /// (`captureSafeBuffer`); both must be silence for the tone to come back whole.
    static func toneSchedule() -> AudioSchedule {
        let tone = HapticEvent(
            type: .audioContinuous, parameters: [HapticEventParameter(parameterID: .audioVolume, value: 0.8)],
            relativeTime: 0.05, duration: 0.2)
        let tail = HapticEvent(
            type: .audioContinuous, parameters: [HapticEventParameter(parameterID: .audioVolume, value: 0)],
            relativeTime: 0.25, duration: 0.15)
        return AudioSchedule(pattern: HapticPattern(events: [tone, tail], parameters: [], parameterCurves: []))
    }

    /// `toneSchedule()` as the mixer renders it, 0.4 s in all.
    static func renderedTone() -> [Float] {
        var mixer = AudioMixer(schedule: toneSchedule(), clips: [:], sampleRate: Double(rate))
        var frames = [Float](repeating: 0, count: 2 * rate * 4 / 10)
        mixer.render(into: &frames)
        return frames
    }

    /// The first frame whose left sample stands out of silence.
    static func onset(_ samples: [Float], from start: Int = 0) -> Int? { LoopbackCapture.onset(samples, from: start) }

    /// Captures `frames` from the loopback while `play` plays on its other side (`LoopbackCapture`).
    static func capture(frames: Int, while play: () throws -> Void) throws -> LoopbackCapture.Recording {
        try LoopbackCapture.capture(frames: frames, rate: rate, while: play)
    }

    static func loopbackTone() async throws {
        let rendered = renderedTone()
        let output = try ALSAOutput(
            device: playbackDevice, sampleRate: rate, bufferSeconds: captureSafeBuffer, logger: logger())
        defer { output.close() }
        var written = (before: UInt64(0), heard: UInt64(0))
        let captured = try capture(frames: rendered.count / 2 + rate / 4) {
            written.before = MonotonicTime.nanoseconds()
            written.heard = try output.write(rendered)
            try output.drain()
        }
        print(
            "  output \(output.latency); first frame due \(tenths(Double(written.heard - written.before) / 1e6)) ms "
                + "after the write")
        let onsetFrame = try check(captured.samples, against: rendered, xruns: output.xrunCount)
        // When the capture heard the tone start, against when the output said it would be heard: for the record,
        // not a requirement.
        let due = Double(written.heard - captured.start) / 1e6 + Double(onset(rendered) ?? 0) * 1000 / Double(rate)
        print(
            "  onset heard \(tenths(Double(onsetFrame) * 1000 / Double(rate) - due)) ms after the time the output gave")
    }

    /// A pattern's sound scheduled 200 ms ahead on a `MixingStream` (after the 100 ms its buffer queues, with room
    /// for a slow first period): the tone must be heard whole, and how far its onset is from the time asked for
    /// (the pattern's own 50 ms of silence included) is printed.
    static func scheduledSound() async throws {
        let rendered = renderedTone()
        let output = try ALSAOutput(
            device: playbackDevice, sampleRate: rate, bufferSeconds: captureSafeBuffer, logger: logger())
        defer { output.close() }
        var startTime: UInt64 = 0
        let captured = try capture(frames: rendered.count / 2 + rate / 2) {
            let stream = try MixingStream(output: output, logger: logger())
            defer { stream.close() }
            startTime = MonotonicTime.nanoseconds() + UInt64((captureSafeBuffer + 0.1) * 1e9)
            let mixer = AudioMixer(schedule: toneSchedule(), clips: [:], sampleRate: Double(rate))
            let id = stream.play(mixer, at: startTime)
            while stream.isActive(id) { Sys.sleep(nanoseconds: 10_000_000) }
            // The pattern has been rendered, not yet heard: let the buffer play out before the stream stops.
            Sys.sleep(nanoseconds: UInt64((captureSafeBuffer + 0.05) * 1e9))
            try require(stream.failure == nil, "the stream failed: \(String(describing: stream.failure))")
        }
        let onsetFrame = try check(captured.samples, against: rendered, xruns: output.xrunCount)
        let due = Double(startTime - captured.start) / 1e6 + Double(onset(rendered) ?? 0) * 1000 / Double(rate)
        print("  onset heard \(tenths(Double(onsetFrame) * 1000 / Double(rate) - due)) ms after its scheduled time")
    }

    /// A DualSense's voice coils over USB, on a 4-channel card: the loopback stands in for the pad's sound card
    /// (a USB audio function cannot enumerate on dummy_hcd). A tone of sharpness 0.5 played on the voice-coil
    /// stream must come back on channels 3 and 4 exactly as rendered and limited, with channels 1 and 2 silent.
    static func voiceCoilChannels() async throws {
        let (pattern, rendered) = coilTone()
        // After what the stream has queued (its buffer), with room for a slow first period.
        let lead = captureSafeBuffer + 0.1
        var underruns = 0
        let captured = try LoopbackCapture.capture(
            frames: rendered.count / 2 + Int(Double(rate) * (lead + 0.4)), rate: rate, device: captureDevice,
            channels: 4
        ) {
            let stream = try VoiceCoilStream.soundCard(
                playbackDevice, bufferSeconds: captureSafeBuffer, logger: logger())
            defer { stream.close() }
            stream.play(pattern, atNanoseconds: MonotonicTime.nanoseconds() + UInt64(lead * 1e9))
            Sys.sleep(nanoseconds: UInt64((lead + 0.2 + captureSafeBuffer + 0.1) * 1e9))
            underruns = stream.counts.underruns
        }
        try checkCoilChannels(captured.samples, against: rendered, xruns: underruns)
    }

    /// The tone the voice-coil tests play (sharpness 0.5, 0.2 s at 0.8), and its frames as the stream sends them:
    /// the render, limited, then 0.15 s of silence (what snd-aloop repeats when playing stops must be silence).
    static func coilTone() -> (pattern: HapticPattern, rendered: [Float]) {
        let pattern = AHAPFixtures.tone(seconds: 0.2, intensity: 0.8)
        let renderer = WaveformRenderer(pattern: pattern, sampleRate: Double(rate))
        let limited = ActuatorFrames.mixed(
            [renderer.render(from: 0, count: renderer.endFrame)], limiter: SoftLimiter.standard)
        let tail = [Float](repeating: 0, count: 2 * rate * 15 / 100)
        return (pattern, limited.interleaved.map { Float($0) } + tail)
    }

    /// Checks a 4-channel capture: channels 1 and 2 silent, channels 3 and 4 `rendered` (`check`).
    static func checkCoilChannels(_ samples: [Float], against rendered: [Float], xruns: Int, tolerance: Float = 1e-6)
        throws
    {
        var front: [Float] = []
        for frame in 0..<samples.count / 4 { front += [samples[4 * frame], samples[4 * frame + 1]] }
        try require(front.allSatisfy { $0 == 0 }, "channels 1 and 2 are not silent")
        _ = try check(coilChannels(samples), against: rendered, xruns: xruns, tolerance: tolerance)
        print("  channels 3 and 4: the tone as rendered; channels 1 and 2: silent, over \(samples.count / 4) frames")
    }

    /// Channels 3 and 4 (the voice coils) of a 4-channel capture, interleaved.
    static func coilChannels(_ samples: [Float]) -> [Float] {
        var coils: [Float] = []
        for frame in 0..<samples.count / 4 { coils += [samples[4 * frame + 2], samples[4 * frame + 3]] }
        return coils
    }

    /// The number of snd-aloop's card.
    static func loopbackCardNumber() throws -> Int {
        let target = try Sys.readLink("/proc/asound/Loopback")
        guard target.hasPrefix("card"), let number = Int(target.dropFirst(4)) else {
            throw TestFailure(reason: "/proc/asound/Loopback points at \(target), not at a card")
        }
        return number
    }

    /// Opens the loopback's playback substreams from `first` on. snd-aloop has eight where a DualSense's card has
    /// one, and `plughw:N,0` takes any free one: holding these makes the card busy as a pad's is once its one
    /// substream is taken.
    static func holdPlaybackSubstreams(from first: Int) throws -> [ALSAOutput] {
        let substreams = try Sys.directoryEntries("/proc/asound/Loopback/pcm0p").filter { $0.hasPrefix("sub") }.count
        return try (first..<substreams).map { substream in
            try ALSAOutput(
                device: "hw:Loopback,0,\(substream)", sampleRate: rate, bufferSeconds: 0.04, channels: 4,
                logger: logger())
        }
    }

    /// The voice coils over USB, told a card number whose device another program holds while no sound server
    /// runs: the stream is refused with a message that says the card is busy and no server answers.
    static func voiceCoilCardHeldWithoutServer() async throws {
        let card = try loopbackCardNumber()
        let holders = try holdPlaybackSubstreams(from: 0)
        defer { for holder in holders { holder.close() } }
        do {
            let stream = try VoiceCoilStream.soundCard(number: card, logger: logger())
            stream.close()
            throw TestFailure(reason: "the voice coils opened \(stream.deviceName) on a card another program holds")
        } catch let failure as OutputFailure {
            print("  \(failure)")
            try require(
                failure.message.contains("busy") && failure.message.contains("no sound server answers"),
                "the refusal does not say that the card is busy and no server answers: \(failure)")
        }
    }

    /// The stream's buffer through the guest's PulseAudio. Its sink runs without timer-based scheduling (it turns
    /// that off in a virtual machine) on four 25 ms fragments, and shares the one emulated CPU with the stream, the
    /// capture and the test: a client buffer of 100 ms underran there (4 times in 3 s without a capture), 200 ms
    /// never. The product's 30 ms underran never in 10 s per size through a timer-scheduled server on the host.
    static let serverBuffer = 0.3

    /// The voice coils over USB while PulseAudio holds the card (the loopback standing in for the pad's): the
    /// card's device is busy, so the stream goes to the server's 4-channel output on the card through the
    /// server's ALSA plugin, and the tone comes back on channels 3 and 4 as rendered, channels 1 and 2 silent.
    static func voiceCoilsThroughSoundServer() async throws {
        let card = try loopbackCardNumber()
        let server = try SoundServerDaemon()
        defer { server.stop() }
        // The server holds substream 0, as it holds a pad's one.
        let holders = try holdPlaybackSubstreams(from: 1)
        defer { for holder in holders { holder.close() } }
        // What `haptics probe` reports: the card held, by the server's process.
        try requireEqual(
            HDActuators.soundCardHolder(card: card)?.command, "pulseaudio", "the holder of the card as probed")
        do {
            let direct = try ALSAOutput(device: "plughw:\(card),0", channels: 4, logger: logger())
            direct.close()
            throw TestFailure(reason: "the card's own device opened while the sound server held it")
        } catch let error as AudioDeviceError {
            try require(error.isBusy, "the card's own device refused with \(error), not busy")
        }
        let (pattern, rendered) = coilTone()
        var underruns = 0
        var device = ""
        var scheduled: UInt64 = 0
        // The capture lasts until the stream has had its time to play the tone out through the server, after a
        // start whose length (connecting to the server) is the guest's to decide.
        let captured = try LoopbackCapture.capture(
            frames: rendered.count / 2 + rate * 8 / 10, rate: rate, device: "plug" + captureDevice, channels: 4,
            throughPlay: true
        ) {
            let stream = try VoiceCoilStream.soundCard(
                number: card, bufferSeconds: serverBuffer, logger: logger())
            defer { stream.close() }
            device = stream.deviceName
            scheduled = MonotonicTime.nanoseconds() + UInt64((serverBuffer + 0.1) * 1e9)
            stream.play(pattern, atNanoseconds: scheduled)
            Sys.sleep(nanoseconds: UInt64((2 * serverBuffer + 0.1 + 0.2 + 0.1) * 1e9))
            underruns = stream.counts.underruns
        }
        print("  played through \(device)")
        if let heard = onset(coilChannels(captured.samples)), let due = onset(rendered) {
            let late = captured.seconds(ofFrame: heard) - Double(scheduled) / 1e9 - Double(due) / Double(rate)
            print("  the tone came back \(tenths(late * 1000)) ms after its time (the server's buffer and sink)")
        }
        try requireEqual(device, "pulse:DEVICE=\(server.sink)", "the device the stream went to")
        // The server's output runs 16-bit samples, as the pad's card does: each comes back within half a step.
        try checkCoilChannels(captured.samples, against: rendered, xruns: underruns, tolerance: 0.5 / 32768 + 1e-6)
    }

    /// `value` rounded to one decimal, for the printed figures.
    static func tenths(_ value: Double) -> Double { (value * 10).rounded() / 10 }

    /// Returns the capture's onset frame.
    static func check(_ captured: [Float], against rendered: [Float], xruns: Int, tolerance: Float = 1e-6) throws
        -> Int
    {
        try requireEqual(xruns, 0, underrunReason)
        guard let renderedOnset = onset(rendered), let capturedOnset = onset(captured) else {
            throw TestFailure(reason: "no tone in the capture (\(captured.count / 2) frames, all below 0.02)")
        }
        let shift = capturedOnset - renderedOnset
        // Heard earlier, cut short or heard again: the tone heard other than rendered (`differenceReason`).
        try require(shift >= 0, "\(differenceReason): its onset (frame \(capturedOnset)) precedes the rendered one")
        let toneFrames = rendered.count / 2 - renderedOnset
        try require(
            captured.count / 2 >= capturedOnset + toneFrames,
            "\(differenceReason): the capture ends before the tone does")
        var worst: Float = 0
        var firstDifference: Int?
        var power = (captured: 0.0, rendered: 0.0)
        for index in 2 * renderedOnset..<rendered.count {
            let heard = captured[index + 2 * shift]
            if firstDifference == nil, abs(heard - rendered[index]) >= tolerance {
                firstDifference = index / 2 - renderedOnset
            }
            worst = max(worst, abs(heard - rendered[index]))
            power.captured += Double(heard * heard)
            power.rendered += Double(rendered[index] * rendered[index])
        }
        let level = (power.captured / power.rendered).squareRoot()
        print("  onset at capture frame \(capturedOnset), level \(level) of the rendered, largest difference \(worst)")
        try require(
            worst < tolerance,
            "\(differenceReason) by up to \(worst), from frame \(firstDifference ?? 0) after the onset on")
        try require(
            onset(captured, from: capturedOnset + toneFrames) == nil, "\(differenceReason): sound after the tone ended")
        return capturedOnset
    }

    static func deviceList() async throws {
        let devices = try AudioDevices.list(includingCaptureOnly: true)
        let loopback = devices.filter { $0.name.contains("CARD=Loopback") }
        for device in loopback { print("  \(device.name): \(device.description)") }
        try require(
            loopback.contains { $0.name.hasPrefix("hw:") && $0.canPlay && $0.canCapture },
            "no hw: device of the Loopback card that plays and captures among \(devices.map(\.name))")
    }

    /// A constant on the left cross-faded over 0.2 s into a constant on the right, on a `MixingStream`: in the
    /// capture, left² + right² must stay at its level from the first sound's start to the second's full level
    /// (no gap, no dip), and the left side must follow the equal-power curve.
    static func crossFade() async throws {
        let output = try ALSAOutput(device: playbackDevice, sampleRate: rate, bufferSeconds: 0.1, logger: logger())
        defer { output.close() }
        func constant(left: Float, right: Float) -> ClipSource {
            ClipSource(AudioClip(sampleRate: Double(rate), channelCount: 2, samples: [left, right])!, loops: true)
        }
        let fadeSeconds = 0.2
        let captured = try capture(frames: rate * 4 / 5) {
            let stream = try MixingStream(output: output, logger: logger())
            defer { stream.close() }
            let first = stream.play(constant(left: 0.5, right: 0))
            Sys.sleep(nanoseconds: 150_000_000)
            stream.together { changes in
                let second = changes.play(constant(left: 0, right: 0.5), gain: 0)
                changes.fade(first, to: 0, over: fadeSeconds, thenStop: true)
                changes.fade(second, to: 1, over: fadeSeconds)
            }
            Sys.sleep(nanoseconds: 350_000_000)
            try require(stream.failure == nil, "the stream failed: \(String(describing: stream.failure))")
        }
        try requireEqual(output.xrunCount, 0, "\(underrunReason) a cross-fade")
        try checkCrossFade(
            captured.samples, fadeFrames: Int(fadeSeconds * Double(rate)), ringFrames: output.latency.bufferFrames)
    }

    /// `ringFrames`: the playback buffer's length. A gap or a dip in the fade, or a fade of another length, is
    /// what a stall longer than the queue makes of the capture (`requireFadeLength`): a `TimingFailure`.
    static func checkCrossFade(_ samples: [Float], fadeFrames: Int, ringFrames: Int) throws {
        let frames = samples.count / 2
        // The glide starts from the full level exactly and ends on the target exactly: the fade's first frame is
        // the one before the left side first drops, its end the first frame at which the right side is full.
        let left = { (frame: Int) in samples[2 * frame] }
        let right = { (frame: Int) in samples[2 * frame + 1] }
        guard let start = (0..<frames).first(where: { left($0) > 0.4 }),
            let fadeStart = (start..<frames).first(where: { left($0) < 0.5 }).map({ $0 - 1 }),
            let fadeEnd = (fadeStart..<frames).first(where: { right($0) >= 0.5 })
        else { throw TestFailure(reason: "no complete cross-fade in the capture") }
        var worst: Float = 0
        for frame in start...fadeEnd {
            worst = max(worst, abs(left(frame) * left(frame) + right(frame) * right(frame) - 0.25))
        }
        let middle = left(fadeStart + fadeFrames / 2)
        print(
            "  fade over \(fadeEnd - fadeStart) frames (\(fadeFrames) asked), power off by at most \(worst), "
                + "left at the middle \(middle)")
        // A gap or a dip is the ring's stale frames (the silence before the first sound, or frames of an earlier
        // lap) heard after a stall longer than the queue (`requireFadeLength`).
        if worst >= 1e-4 {
            throw TimingFailure(
                reason: "left² + right² strays from 0.25 by \(worst) during the cross-fade",
                explainingStall: stallExcusingADifference)
        }
        try requireFadeLength(fadeEnd - fadeStart, asked: fadeFrames, ringFrames: ringFrames)
        try require(abs(Double(middle) - 0.5 * 0.5.squareRoot()) < 2e-3, "left at the fade's middle: \(middle)")
    }

    /// A captured fade lasted `frames`, `asked` were rendered (`ringFrames`, the playback buffer's length): within
    /// 2 %. A stall longer than what the writer keeps queued (`stallExcusingADifference`) carries snd-aloop's
    /// position past what was written, so that its capture hears stale ring frames (a fade longer by whole
    /// buffers, a gap of the silence before it, a dip of an earlier lap's frames) or misses frames, with no
    /// underrun reported: a fade off by more is then a `TimingFailure`.
    static func requireFadeLength(_ frames: Int, asked: Int, ringFrames: Int) throws {
        let excess = frames - asked
        guard abs(excess) >= asked / 50 else { return }
        let rings = Int((Double(excess) / Double(ringFrames)).rounded())
        let wholeBuffers = rings >= 1 && abs(excess - rings * ringFrames) < asked / 50
        throw TimingFailure(
            reason: "the fade lasted \(frames) frames, not \(asked)"
                + (wholeBuffers ? ": \(rings) whole playback buffers more, stale ring frames heard again" : ""),
            explainingStall: stallExcusingADifference)
    }

    /// The loopback card unbound from its driver while a `MixingStream` plays on it (what an unplugged USB sound
    /// card does), then bound again: the stream must be interrupted, then play on, its sound still there.
    static func cardComesBack() async throws {
        try LoopbackCard.requireUnbindable()
        let open: MixingStream.Reopen = { () throws(AudioDeviceError) -> any AudioOutput in
            try ALSAOutput(device: playbackDevice, sampleRate: rate, bufferSeconds: 0.04, logger: logger())
        }
        let changes = Lock<[Bool]>([])
        let stream = try MixingStream(
            output: try open(), reopen: open, logger: logger(),
            onInterruption: { interrupted in changes.withLock { $0.append(interrupted) } })
        defer { stream.close() }
        let id = stream.play(
            ClipSource(AudioClip(sampleRate: Double(rate), channelCount: 2, samples: [0.5, 0.25])!, loops: true))
        Sys.sleep(nanoseconds: 100_000_000)
        try LoopbackCard.unbind()
        do {
            try await waitFor("the stream to be interrupted") { stream.isInterrupted || stream.failure != nil }
            try require(stream.failure == nil, "the stream failed instead: \(String(describing: stream.failure))")
        } catch {
            // The card bound again whatever failed here: every later test that plays sound needs it.
            try? LoopbackCard.bind()
            throw error
        }
        try LoopbackCard.bind()
        try await waitFor("the stream to play again") { !stream.isInterrupted }
        try require(stream.isActive(id), "the sound should have waited through the interruption")
        // The stream's thread clears `isInterrupted` before it calls `onInterruption(false)`: wait for the call.
        try await waitFor("the stream to say it plays again") { changes.withLock { $0.count } >= 2 }
        try requireEqual(changes.withLock { $0 }, [true, false], "interruption changes")
        let captured = try capture(frames: rate / 5) { Sys.sleep(nanoseconds: 250_000_000) }
        try require(captured.samples.contains(0.5), "the sound is not in the capture after the card came back")
    }

    /// Polls `condition` every 10 ms; fails after 20 s (a hang guard, not a timing requirement).
    static func waitFor(_ what: String, _ condition: () -> Bool) async throws {
        let deadline = MonotonicTime.nanoseconds() + 20_000_000_000
        while !condition() {
            try require(MonotonicTime.nanoseconds() < deadline, "gave up waiting for \(what) after 20 s")
            Sys.sleep(nanoseconds: 10_000_000)
        }
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
        // A write that a signal cut short (EINTR) is made again: the frames go out, and no xrun is counted.
        SyscallFaults.arm(.init(site: "snd_pcm_writei", errno: .interrupted, calls: .nth(1)))
        try output.write(block)
        try requireEqual(SyscallFaults.disarm().injected, 1, "the interruption injected at snd_pcm_writei")
        try requireEqual(output.xrunCount, 3, "xruns after a write a signal interrupted")
        // A write whose wait for room timed out (EIO) on a running stream, as after the whole machine stood still
        // past the wait: written again; a second timeout in a row is thrown.
        for _ in 0..<4 { try output.write(block) }
        SyscallFaults.arm(.init(site: "snd_pcm_writei", errno: .ioError, calls: .nth(1)))
        try output.write(block)
        try requireEqual(SyscallFaults.disarm().injected, 1, "the timeout injected at snd_pcm_writei")
        SyscallFaults.arm(.init(site: "snd_pcm_writei", errno: .ioError, calls: .from(1)))
        do {
            try output.write(block)
            throw TestFailure(reason: "two timed-out waits in a row (EIO) should throw")
        } catch let error as AudioDeviceError {
            try require(error.errno == .ioError && error.call == "snd_pcm_writei", "the error for EIO: \(error)")
        }
        SyscallFaults.disarm()

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

/// snd-aloop's card as a platform device: unbound from its driver, it goes away as an unplugged USB sound card
/// does (open streams fail with `ENODEV`); bound again, it is back under the same name.
enum LoopbackCard {
    static let driver = "/sys/bus/platform/drivers/snd_aloop"
    static let device = "snd_aloop.0"

    /// Skips the test when the card cannot be unbound here.
    static func requireUnbindable() throws {
        guard Sys.exists("\(driver)/\(device)") else { throw TestSkip(.sndAloop, "no \(driver)/\(device) to unbind") }
    }

    static func unbind() throws { try Sys.writeFile("\(driver)/unbind", device) }
    static func bind() throws { try Sys.writeFile("\(driver)/bind", device) }
}
