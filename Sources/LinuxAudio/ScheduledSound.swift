public import AudioRendering
public import LinuxInput
public import Logging
import Synchronization

/// A pattern's sound played on an output from a chosen moment on `CLOCK_MONOTONIC`, on a thread of its own.
///
/// The output's queue is counted: at the start the thread writes as much silence as puts the pattern's time 0
/// at `startNanoseconds` (the moment a frame written now is heard is the call's time plus `delay()`), or, when
/// that moment has already passed, starts the pattern as far in as it should be by then. Afterwards it keeps
/// the output fed one period at a time until the pattern ends (then drains it, so that the end is heard) or
/// `stop()` is called. It is the only writer of the output while it plays.
public final class ScheduledSound: Sendable {
    /// How the playing ended.
    public enum Ending: Sendable, Equatable {
        /// The pattern played to its end and the output has played it out.
        case finished
        /// `stop()` ended it early.
        case stopped
        /// The output failed (a device gone, an error it could not recover from).
        case failed(AudioDeviceError)
    }

    private let stopRequested = Atomic<Bool>(false)
    private let ending = Lock<Ending?>(nil)
    private let thread = Lock<ServiceThread?>(nil)

    /// Starts playing `schedule` (with `clips` for its `AudioCustom` voices, at the output's rate) so that its
    /// time 0 is heard at `startNanoseconds`; `onEnd` is called on the thread when it ends.
    public init(
        schedule: AudioSchedule, clips: [String: AudioClip], output: any AudioOutput, startNanoseconds: UInt64,
        logger: Logger, onEnd: @escaping @Sendable (Ending) -> Void = { _ in }
    ) throws(SystemCallError) {
        let mixer = AudioMixer(schedule: schedule, clips: clips, sampleRate: Double(output.sampleRate))
        let started = try ServiceThread.start { [self] in
            let result = play(mixer, on: output, from: startNanoseconds)
            if case .failed(let error) = result {
                logger.warning("sound stopped by its output", metadata: ["error": "\(error)"])
            }
            ending.withLock { $0 = result }
            onEnd(result)
        }
        thread.withLock { $0 = started }
    }

    /// Asks the thread to stop after the period it is writing; what is queued plays out.
    public func stop() { stopRequested.store(true, ordering: .relaxed) }

    /// Waits for the thread to end and returns how it ended. From `onEnd` (on the thread itself) it returns the
    /// ending at once.
    @discardableResult
    public func wait() -> Ending {
        let joined = thread.withLock { held -> ServiceThread? in
            guard let current = held, !current.isCurrent else { return nil }
            held = nil
            return current
        }
        joined?.join()
        return ending.withLock { $0 } ?? .stopped
    }

    /// The thread holds the sound until it ends, so this runs after it ended: joined here, or detached when the
    /// thread itself lets go of the last reference.
    deinit {
        thread.withLock { held in
            guard let current = held else { return }
            if current.isCurrent { current.detach() } else { current.join() }
            held = nil
        }
    }

    private var isStopping: Bool { stopRequested.load(ordering: .relaxed) }

    private func play(_ mixer: consuming AudioMixer, on output: any AudioOutput, from start: UInt64) -> Ending {
        var mixer = mixer
        let rate = Double(output.sampleRate)
        let chunk = max(output.latency.periodFrames, AudioMixer.controlFrames)
        var buffer = [Float](repeating: 0, count: 2 * chunk)
        do {
            let heardNext = MonotonicTime.nanoseconds() + UInt64(try output.delay() * 1e9)
            if start > heardNext {
                var silence = Int((Double(start - heardNext) * rate / 1e9).rounded())
                while silence > 0 {
                    if isStopping { return .stopped }
                    let count = min(chunk, silence)
                    try output.write([Float](repeating: 0, count: 2 * count))
                    silence -= count
                }
            } else {
                // Late: render and drop what should have been heard already (nothing, when that is all of it).
                if Double(heardNext - start) / 1e9 >= mixer.schedule.end { return .finished }
                var late = Int((Double(heardNext - start) * rate / 1e9).rounded())
                while late > 0, !mixer.isFinished {
                    if isStopping { return .stopped }
                    var skipped = [Float](repeating: 0, count: 2 * min(chunk, late))
                    mixer.render(into: &skipped)
                    late -= skipped.count / 2
                }
            }
            while !mixer.isFinished {
                if isStopping { return .stopped }
                mixer.render(into: &buffer)
                try output.write(buffer)
            }
            try output.drain()
            return .finished
        } catch {
            return .failed(error)
        }
    }
}
