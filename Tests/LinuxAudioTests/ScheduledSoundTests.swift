import AHAP
import AudioRendering
import LinuxAudio
import LinuxInput
import Logging
import Testing

/// Behaviour only, on the null output (its clock is real, so the patterns are short); when the sound starts is
/// measured against a real driver in the kernel tests.
@Suite("Scheduled sound")
struct ScheduledSoundTests {
    let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    func tone(seconds: Double) -> AudioSchedule {
        AudioSchedule(
            pattern: HapticPattern(
                events: [HapticEvent(type: .audioContinuous, relativeTime: 0, duration: seconds)], parameters: [],
                parameterCurves: []))
    }

    @Test("a pattern plays to its end, its silence first, and the output is left drained")
    func playsToTheEnd() throws {
        let output = NullAudioOutput(sampleRate: 8000, bufferSeconds: 0.01)
        let ended = Lock<[ScheduledSound.Ending]>([])
        let sound = try ScheduledSound(
            schedule: tone(seconds: 0.02), clips: [:], output: output,
            startNanoseconds: MonotonicTime.nanoseconds() + 10_000_000, logger: logger
        ) { ending in ended.withLock { $0.append(ending) } }
        #expect(sound.wait() == .finished)
        #expect(ended.withLock { $0 } == [.finished], "onEnd is called once, with the ending")
        #expect(try output.delay() == 0)
    }

    @Test("onEnd may wait on its own sound, and the last reference may go on the sound's thread")
    func endsOnItsOwnThread() throws {
        let output = NullAudioOutput(sampleRate: 8000, bufferSeconds: 0.01)
        let held = DeadlineWaiter()
        let done = DeadlineWaiter()
        let endings = Lock<[ScheduledSound.Ending]>([])
        let holder = Lock<ScheduledSound?>(nil)
        // Only `holder` and the thread hold the sound, so its last reference goes on its own thread.
        holder.withLock {
            $0 = try? ScheduledSound(
                schedule: tone(seconds: 0.01), clips: [:], output: output, startNanoseconds: 0, logger: logger
            ) { _ in
                held.wait(untilNanoseconds: nil)
                let own = holder.withLock { $0 }
                endings.withLock { $0.append(own?.wait() ?? .stopped) }
                holder.withLock { $0 = nil }
                done.signal()
            }
        }
        held.signal()
        done.wait(untilNanoseconds: nil)
        #expect(endings.withLock { $0 } == [.finished])
    }

    @Test("a start long past plays nothing and finishes")
    func startLongPast() throws {
        let output = NullAudioOutput(sampleRate: 8000, bufferSeconds: 0.01)
        let sound = try ScheduledSound(
            schedule: tone(seconds: 30), clips: [:], output: output, startNanoseconds: 0, logger: logger)
        #expect(sound.wait() == .finished)
    }

    @Test("stop() ends a long pattern early, and a closed output ends it as failed")
    func stopsAndFails() throws {
        let output = NullAudioOutput(sampleRate: 8000, bufferSeconds: 0.01)
        let long = try ScheduledSound(
            schedule: tone(seconds: 30), clips: [:], output: output, startNanoseconds: MonotonicTime.nanoseconds(),
            logger: logger)
        long.stop()
        #expect(long.wait() == .stopped)
        output.close()
        let failing = try ScheduledSound(
            schedule: tone(seconds: 1), clips: [:], output: output, startNanoseconds: 0, logger: logger)
        guard case .failed(let error) = failing.wait() else {
            Issue.record("a closed output should fail the sound")
            return
        }
        #expect(error.device == "null")
    }
}
