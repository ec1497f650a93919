internal import CALSA
@_spi(Internals) internal import LinuxSystem

/// alsa-lib writes its diagnostics to stderr unless it is given a handler, and our libraries never print (every
/// failure it reports there also comes back as an error code, which we throw and log): the first use of alsa-lib
/// quiets them, once for the process, unless the application had installed a handler of its own, which stays.
/// A handler the application installs later replaces ours; we never put ours back over it.
let alsaDiagnosticsQuieted: Void = { _ = linuxaudio_alsa_silence_unless_handled() }()

/// An open ALSA PCM carrying interleaved 32-bit float frames (stereo unless asked otherwise) at one rate: the one
/// place alsa-lib's PCM calls
/// are made, for the output and for the test bench's capture. Not thread-safe: its owner serialises the calls.
///
/// Every call passes through `SyscallFaults` (a site per alsa-lib function), so tests can make any of them fail.
package final class PCM: @unchecked Sendable {
    package enum Direction: Sendable {
        case playback, capture
    }

    /// The ALSA device name the PCM was opened on.
    package let device: String
    package let sampleRate: Int
    /// The device's ring buffer and the period in which it moves, in frames.
    package let bufferFrames: Int
    package let periodFrames: Int
    /// Samples per frame.
    package let channels: Int
    private var handle: OpaquePointer?

    /// Opens `device` in blocking mode and sets it to `channels` channels of float at exactly `sampleRate`
    /// (alsa-lib converts where the hardware cannot, on devices that go through its plug layer: "default",
    /// "plughw:") with a ring buffer of about `bufferSeconds`. Playback starts as soon as the first frame is
    /// written, so that when a frame is heard follows from what was queued before it.
    package init(device: String, direction: Direction, sampleRate: Int, bufferSeconds: Double, channels: Int = 2)
        throws(AudioDeviceError)
    {
        guard (1...1_000_000).contains(sampleRate) else {
            throw AudioDeviceError(
                device: device, call: "snd_pcm_set_params", errno: .invalidArgument,
                message: "a rate of \(sampleRate) Hz is not within 1 ... 1000000 Hz")
        }
        if let problem = AudioOutputs.bufferProblem(bufferSeconds) {
            throw AudioDeviceError(
                device: device, call: "snd_pcm_set_params", errno: .invalidArgument, message: problem)
        }
        let channelCount = max(1, channels)
        self.channels = channelCount
        _ = alsaDiagnosticsQuieted
        self.device = device
        self.sampleRate = sampleRate
        var opened: OpaquePointer?
        let stream = direction == .playback ? SND_PCM_STREAM_PLAYBACK : SND_PCM_STREAM_CAPTURE
        try Self.check("snd_pcm_open", device) { Int(snd_pcm_open(&opened, device, stream, 0)) }
        guard let opened else {
            throw AudioDeviceError(device: device, call: "snd_pcm_open", errno: .noMemory, message: "no PCM handle")
        }
        do {
            try Self.check("snd_pcm_set_params", device) {
                Int(
                    snd_pcm_set_params(
                        opened, SND_PCM_FORMAT_FLOAT_LE, SND_PCM_ACCESS_RW_INTERLEAVED, UInt32(channelCount),
                        UInt32(sampleRate), 1, UInt32(bufferSeconds * 1_000_000)))
            }
            var buffer: snd_pcm_uframes_t = 0
            var period: snd_pcm_uframes_t = 0
            try Self.check("snd_pcm_get_params", device) { Int(snd_pcm_get_params(opened, &buffer, &period)) }
            // A capture too: one prepared again after an overrun then starts at its next read, however few frames
            // that read asks for (alsa-lib's setup waits for about a buffer's worth, and a read asking less than
            // that waited out its timeout, EIO, on a capture that never ran again).
            try Self.startOnFirstFrame(opened, device)
            bufferFrames = Int(buffer)
            periodFrames = Int(period)
        } catch {
            snd_pcm_close(opened)
            throw error
        }
        handle = opened
    }

    deinit { close() }

    /// Sets the start threshold to one frame (alsa-lib's simple setup waits for a full buffer): playback starts
    /// with the first frame written, a capture with the first read.
    private static func startOnFirstFrame(_ pcm: OpaquePointer, _ device: String) throws(AudioDeviceError) {
        var parameters: OpaquePointer?
        try check("snd_pcm_sw_params_malloc", device) { Int(snd_pcm_sw_params_malloc(&parameters)) }
        defer { snd_pcm_sw_params_free(parameters) }
        try check("snd_pcm_sw_params_current", device) { Int(snd_pcm_sw_params_current(pcm, parameters)) }
        try check("snd_pcm_sw_params_set_start_threshold", device) {
            Int(snd_pcm_sw_params_set_start_threshold(pcm, parameters, 1))
        }
        try check("snd_pcm_sw_params", device) { Int(snd_pcm_sw_params(pcm, parameters)) }
    }

    /// What went wrong in a call that the stream got over (an underrun, a suspend), for the owner's log.
    package typealias Recovered = (AudioDeviceError) -> Void

    /// Writes interleaved frames, waiting while the ring buffer is full; an underrun (`EPIPE`) or a suspend
    /// (`ESTRPIPE`) on the way is recovered with `snd_pcm_recover` and reported to `recovered`, and so is a wait
    /// that timed out (`EIO`) on a running stream, once in a row, by writing again.
    package func write(_ samples: UnsafeBufferPointer<Float>, recovered: Recovered) throws(AudioDeviceError) {
        try transfer(frames: samples.count / channels, call: "snd_pcm_writei", recovered: recovered) {
            [handle, channels] offset, count in
            snd_pcm_writei(handle, samples.baseAddress.map { $0 + offset * channels }, snd_pcm_uframes_t(count))
        }
    }

    /// Fills `samples` with captured interleaved frames, waiting for them; an overrun is recovered as in `write`.
    package func read(into samples: UnsafeMutableBufferPointer<Float>, recovered: Recovered) throws(AudioDeviceError) {
        try transfer(frames: samples.count / channels, call: "snd_pcm_readi", recovered: recovered) {
            [handle, channels] offset, count in
            snd_pcm_readi(handle, samples.baseAddress.map { $0 + offset * channels }, snd_pcm_uframes_t(count))
        }
    }

    private func transfer(
        frames: Int, call: String, recovered: Recovered, _ body: (_ offset: Int, _ count: Int) -> Int
    ) throws(AudioDeviceError) {
        guard let handle else { throw closedError(call) }
        var done = 0
        var timedOut = false
        while done < frames {
            let result = Self.fault(at: call) ?? body(done, frames - done)
            if result >= 0 {
                done += result
                timedOut = false
                continue
            }
            // A signal cut the wait short: nothing happened to the stream, so the call is made again, and is no
            // error to recover from or count.
            if result == -Int(Errno.interrupted.rawValue) { continue }
            // The kernel's wait for room (or frames) timed out, the stream still running: the whole machine stood
            // still longer than the wait (at least 100 ms, and the buffer's length and a tenth), and the device
            // runs on, so the call is made again. A second timeout with nothing moved in between is the device's
            // (it stopped taking frames) and is thrown.
            let state = snd_pcm_state(handle)
            if result == -Int(Errno.ioError.rawValue), !timedOut,
                state == SND_PCM_STATE_RUNNING || state == SND_PCM_STATE_XRUN
            {
                timedOut = true
                recovered(Self.error(result, call: call, device: device))
                continue
            }
            recovered(try recover(from: result, call: call))
        }
    }

    /// Gets the stream going again after `code` from `call` when that is an underrun or overrun (`EPIPE`), a
    /// suspend (`ESTRPIPE`) or an interruption (`EINTR`, which needs nothing done; a transfer makes its call again
    /// without coming here); returns the error it got over, or throws the one it cannot (a device gone, `ENODEV`).
    private func recover(from code: Int, call: String) throws(AudioDeviceError) -> AudioDeviceError {
        let error = disconnection(Self.error(code, call: call, device: device))
        guard [Errno.brokenPipe, .streamSuspended, .interrupted].contains(error.errno) else {
            throw error
        }
        do {
            try Self.check("snd_pcm_recover", device) { Int(snd_pcm_recover(handle, Int32(code), 1)) }
        } catch {
            throw disconnection(error)
        }
        return error
    }

    /// `error` as the device gone (`ENODEV`) when it is the `EBADFD` of a stream whose card was disconnected:
    /// the kernel answers so for a disconnected stream before it answers `ENODEV`, and both mean the same.
    private func disconnection(_ error: AudioDeviceError) -> AudioDeviceError {
        guard error.errno == .badState, isDisconnected else { return error }
        return AudioDeviceError(
            device: device, call: error.call, errno: .noDevice, message: "\(error.message): the card was disconnected")
    }

    /// The stream's card was disconnected: `snd_pcm_state` says so, from the status the kernel shares with the
    /// process, or it had to ask the kernel and got the answers a disconnected stream gives (`EBADFD`, then
    /// `ENODEV`), which alsa-lib hands back as a negative state.
    private var isDisconnected: Bool {
        guard let handle else { return false }
        let state = snd_pcm_state(handle)
        let failure = -Int32(bitPattern: state.rawValue)
        return state == SND_PCM_STATE_DISCONNECTED || failure == Errno.badState.rawValue
            || failure == Errno.noDevice.rawValue
    }

    /// Frames queued and not yet heard (playback), or captured and not yet read (capture): `snd_pcm_delay`. An
    /// xrun reported here is recovered first, as in `write`, and reads as an empty queue.
    package func delayFrames(recovered: Recovered) throws(AudioDeviceError) -> Int {
        guard let handle else { throw closedError("snd_pcm_delay") }
        var delay: snd_pcm_sframes_t = 0
        let result = Self.fault(at: "snd_pcm_delay") ?? Int(snd_pcm_delay(handle, &delay))
        if result == -Int(Errno.ioError.rawValue), snd_pcm_state(handle) == SND_PCM_STATE_PREPARED {
            // A stream that has not started plays nothing yet: what it holds is what was written. Some plugins
            // cannot tell a delay before their stream runs (the sound server's `pulse` plugin answers EIO, where
            // a card's own device counts the frames written); the free space tells it then.
            let available = Int(snd_pcm_avail_update(handle))
            return available >= 0 ? max(bufferFrames - available, 0) : 0
        }
        guard result >= 0 else {
            recovered(try recover(from: result, call: "snd_pcm_delay"))
            return 0
        }
        return max(delay, 0)
    }

    /// Starts the stream now (`snd_pcm_start`): for a capture, so that it records from this moment rather
    /// than from the first read.
    package func start() throws(AudioDeviceError) {
        guard let handle else { throw closedError("snd_pcm_start") }
        try Self.check("snd_pcm_start", device) { Int(snd_pcm_start(handle)) }
    }

    /// Waits until every queued frame has been played (`snd_pcm_drain`), then makes the stream ready again.
    package func drain() throws(AudioDeviceError) {
        guard let handle else { throw closedError("snd_pcm_drain") }
        try Self.check("snd_pcm_drain", device) { Int(snd_pcm_drain(handle)) }
        try Self.check("snd_pcm_prepare", device) { Int(snd_pcm_prepare(handle)) }
    }

    /// Drops what is queued and closes the device; later calls throw.
    package func close() {
        guard let handle else { return }
        snd_pcm_close(handle)
        self.handle = nil
    }

    private func closedError(_ call: String) -> AudioDeviceError {
        AudioDeviceError(device: device, call: call, errno: .badFileDescriptor, message: "the PCM is closed")
    }

    /// The -errno that `SyscallFaults` injects at `call`, or nil to make the call.
    private static func fault(at call: String) -> Int? {
        SyscallFaults.injected(at: { call }).map { -Int($0.rawValue) }
    }

    /// Makes a call that returns 0 or more, or -errno; throws the error, retrying an interrupted call.
    private static func check(_ call: String, _ device: String, _ body: () -> Int) throws(AudioDeviceError) {
        while true {
            let result = fault(at: call) ?? body()
            if result >= 0 { return }
            if result == -Int(Errno.interrupted.rawValue) { continue }
            throw error(result, call: call, device: device)
        }
    }

    package static func error(_ code: Int, call: String, device: String) -> AudioDeviceError {
        AudioDeviceError(
            device: device, call: call, errno: Errno(rawValue: Int32(clamping: -code)),
            message: String(cString: snd_strerror(Int32(clamping: code))))
    }
}
