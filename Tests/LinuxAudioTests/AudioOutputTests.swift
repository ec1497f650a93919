import AudioRendering
import CALSA
import LinuxAudio
@_spi(Internals) import LinuxSystem
import Logging
import Testing

/// The outputs against alsa-lib's "null" PCM (defined in its own alsa.conf: no sound card needed) and the null
/// output. Timing is left to the kernel tests and benchmarks: these check behaviour only.
@Suite("Audio outputs")
struct AudioOutputTests {
    let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    /// A rate of 0 divided by zero on the first write, and a negative one trapped converting it, until 6 December.
    @Test("the null output takes a rate outside 1 ... 1,000,000 Hz as the nearest end of it, and writes at it")
    func nullOutputRates() throws {
        for (asked, taken) in [(0, 1), (-48000, 1), (5_000_000, 1_000_000), (48000, 48000)] {
            let output = NullAudioOutput(sampleRate: asked, bufferSeconds: 0.04)
            #expect(output.sampleRate == taken)
            _ = try output.write([Float](repeating: 0, count: 2))
            #expect(!"\(output.latency)".isEmpty)
            output.close()
        }
    }

    @Test("an ALSA output opens, reports its buffer, takes frames and closes")
    func alsaNullDevice() throws {
        let output = try ALSAOutput(device: "null", sampleRate: 48000, bufferSeconds: 0.02, logger: logger)
        #expect(output.latency.bufferFrames > 0 && output.latency.periodFrames > 0)
        #expect(output.latency.periodFrames <= output.latency.bufferFrames)
        let before = MonotonicTime.nanoseconds()
        let heard = try output.write([Float](repeating: 0.25, count: 2 * 480))
        #expect(heard >= before)
        #expect(try output.delay() >= 0)
        output.close()
        let error = #expect(throws: AudioDeviceError.self) { try output.write([0, 0]) }
        #expect(error?.device == "null")
    }

    @Test("a device name that names nothing is refused with alsa-lib's reason, and open() falls back to null")
    func missingDevice() throws {
        let error = #expect(throws: AudioDeviceError.self) {
            try ALSAOutput(device: "hw:NoSuchCard,0", logger: logger)
        }
        #expect(error?.call == "snd_pcm_open" && error?.isDeviceMissing == true, "\(String(describing: error))")
        let output = try AudioOutputs.open(device: "hw:NoSuchCard,0", logger: logger)
        #expect(output.deviceName == "null")
    }

    @Test(
        "a buffer length outside 0.001 ... 10 s or not a number is refused; the null output takes the nearest it can",
        arguments: [Double.nan, .infinity, -0.5, 0, 0.0005, 10.5, 1e12])
    func bufferLengthsThatAreNoBuffer(seconds: Double) throws {
        let error = #expect(throws: AudioDeviceError.self) {
            try ALSAOutput(device: "null", sampleRate: 48000, bufferSeconds: seconds, logger: logger)
        }
        #expect(error?.errno == .invalidArgument && error?.message.hasPrefix("a buffer of ") == true)
        let nearest = seconds.isNaN ? 0.04 : min(max(seconds, 0.001), 10)
        #expect(NullAudioOutput(bufferSeconds: seconds).latency.bufferFrames == Int((nearest * 48000).rounded()))
        #expect(AudioOutputs.bufferProblem(0.001) == nil && AudioOutputs.bufferProblem(10) == nil)
    }

    @Test("an application's own alsa-lib error handler stays when an output opens and devices are listed")
    func applicationsErrorHandlerStays() throws {
        // alsa-lib's handler is the process's: the test's own stands for an application's, and the one found is
        // put back after. It takes alsa-lib's variadic arguments as fixed ones, which it never reads.
        let found = linuxaudio_alsa_handler()
        defer { snd_lib_error_set_handler(found) }
        let own:
            @convention(c) (UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?) ->
                Void = { _, _, _, _, _ in }
        let handler = unsafeBitCast(own, to: OpaquePointer.self)
        snd_lib_error_set_handler(handler)
        try ALSAOutput(device: "null", sampleRate: 48000, bufferSeconds: 0.02, logger: logger).close()
        _ = try AudioDevices.list()
        #expect(linuxaudio_alsa_handler() == handler, "the application's handler was replaced")
    }

    @Test("alsa-lib's device list names its own null device, which plays and captures")
    func deviceList() throws {
        let devices = try AudioDevices.list(includingCaptureOnly: true)
        let null = try #require(devices.first { $0.name == "null" }, "\(devices.map(\.name))")
        #expect(null.canPlay && null.canCapture && !null.description.isEmpty)
        #expect(try AudioDevices.list().allSatisfy(\.canPlay))
    }

    @Test("the null output queues frames on the monotonic clock, one after the other")
    func nullOutputClock() throws {
        let before = MonotonicTime.nanoseconds()
        #expect(try NullAudioOutput().write([0, 0]) >= before, "its time is the monotonic clock's")
        // The same output on a time the test sets: nothing depends on when the writes are made.
        let now = Lock<UInt64>(1_000_000_000)
        let output = NullAudioOutput(sampleRate: 48000, bufferSeconds: 0.5) { now.withLock { $0 } }
        let first = try output.write([Float](repeating: 0, count: 2 * 4800))
        #expect(first == 1_000_000_000, "the first write of an empty queue is heard at once")
        let second = try output.write([Float](repeating: 0, count: 2 * 4800))
        #expect(second - first == 100_000_000, "the second write is heard 0.1 s after the first")
        #expect(try output.delay() == 0.2)
        now.withLock { $0 += 50_000_000 }
        #expect(try output.delay() == 0.15)
        // The queue runs dry at 1.2 s; a write after that is heard when it is made.
        now.withLock { $0 = 1_500_000_000 }
        #expect(try output.delay() == 0)
        #expect(try output.write([0, 0]) == 1_500_000_000)
        output.close()
        #expect(throws: AudioDeviceError.self) { try output.write([0, 0]) }
    }
}
