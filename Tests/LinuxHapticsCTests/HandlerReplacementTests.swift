// Replacing a handler while another thread is inside it: once the replacing call returns, the old handler is
// not running and is not called again, so its user data may be freed. Checked under load, from the handler's
// side: each handler's user data is marked freed once its replacement returned, and a handler that finds its
// own data marked freed when it finishes counts a violation.
import CLinuxHaptics
import LinuxInput
import Testing
@_spi(Internals) import LinuxSystem

/// A handler's user data: how often it ran, and whether the program considers it freed.
final class HandlerData: Sendable {
    private let state = Lock((calls: 0, freed: false, violations: 0))

    var calls: Int { state.withLock { $0.calls } }
    var violations: Int { state.withLock { $0.violations } }
    func free() { state.withLock { $0.freed = true } }

    /// What the handler does: counts the call, works a little (so that a call takes a while), and checks that
    /// the program has not freed this data meanwhile.
    func handle() {
        state.withLock { $0.calls += 1 }
        var work = 0
        for step in 0..<5_000 { work &+= step }
        state.withLock { state in if state.freed || work == 0 { state.violations += 1 } }
    }

    var user: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
}

/// Set until cleared, read from another thread.
final class RunningFlag: Sendable {
    private let value = Lock(true)
    var isSet: Bool { value.withLock { $0 } }
    func clear() { value.withLock { $0 = false } }
}

@Suite struct HandlerReplacementTests {
    static let handler: lh_stopped_handler = { _, user in
        Unmanaged<HandlerData>.fromOpaque(user!).takeUnretainedValue().handle()
    }

    @Test func aReplacedHandlerIsNotRunningOnceTheReplacingCallReturns() async throws {
        let rig = try CEngineRig()
        defer { lh_engine_destroy(rig.engine) }
        var all = [HandlerData()]
        lh_engine_set_stopped_handler(rig.engine, Self.handler, all[0].user)
        // Another thread unplugs and replugs over and over: each unplug calls the stopped handler there.
        let running = RunningFlag()
        let unplugging = Task.detached { [recorder = rig.recorder] in
            while running.isSet {
                recorder.unplug()
                recorder.replug()
            }
        }
        // Each handler is replaced once the other thread has called it, so that it calls it during the replacement.
        for _ in 0..<100 {
            let deadline = ContinuousClock.now + .seconds(30)
            while all[all.count - 1].calls == 0 {
                // Thirty seconds without a call is the test's failure, not a hang of the run.
                guard ContinuousClock.now < deadline else {
                    running.clear()
                    await unplugging.value
                    Issue.record("the stopped handler was not called within 30 s (\(all.count - 1) replaced)")
                    return
                }
                await Task.yield()
            }
            let next = HandlerData()
            lh_engine_set_stopped_handler(rig.engine, Self.handler, next.user)
            all.last?.free()
            all.append(next)
        }
        running.clear()
        await unplugging.value
        #expect(all.map(\.violations).reduce(0, +) == 0)
    }

    /// Two handlers running at once on two threads, each replacing the other's handler: what the stopped handler
    /// (on the unplugging thread) and the reset handler (on the replugging thread) do here. Each waits until the
    /// other has started, so both replacements come while the other handler runs.
    final class Crossing: Sendable {
        let engine: UInt
        let inStopped = DeadlineWaiter()
        let inReset = DeadlineWaiter()
        let returned = Lock(0)
        let bothReturned = DeadlineWaiter()

        init(engine: OpaquePointer) { self.engine = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(engine))) }

        var handle: OpaquePointer { OpaquePointer(bitPattern: engine)! }
        var user: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
        static func from(_ user: UnsafeMutableRawPointer?) -> Crossing {
            Unmanaged<Crossing>.fromOpaque(user!).takeUnretainedValue()
        }

        func replaced() {
            if returned.withLock({ count in
                count += 1
                return count == 2
            }) {
                bothReturned.signal()
            }
        }
    }

    static let crossingStopped: lh_stopped_handler = { _, user in
        let crossing = Crossing.from(user)
        crossing.inStopped.signal()
        crossing.inReset.wait(untilNanoseconds: MonotonicTime.nanoseconds() + 10_000_000_000)
        lh_engine_set_reset_handler(crossing.handle, nil, nil)
        crossing.replaced()
    }

    static let crossingReset: lh_reset_handler = { user in
        let crossing = Crossing.from(user)
        crossing.inReset.signal()
        lh_engine_set_stopped_handler(crossing.handle, nil, nil)
        crossing.replaced()
    }

    @Test func twoHandlersReplacingEachOthersAtOnceBothReturnRatherThanWaitForEachOtherForEver() throws {
        let rig = try CEngineRig()
        let crossing = Crossing(engine: rig.engine)
        lh_engine_set_stopped_handler(rig.engine, Self.crossingStopped, crossing.user)
        lh_engine_set_reset_handler(rig.engine, Self.crossingReset, crossing.user)
        let unplugging = try ServiceThread.start { [recorder = rig.recorder] in recorder.unplug() }
        crossing.inStopped.wait(untilNanoseconds: MonotonicTime.nanoseconds() + 10_000_000_000)
        let replugging = try ServiceThread.start { [recorder = rig.recorder] in recorder.replug() }
        crossing.bothReturned.wait(untilNanoseconds: MonotonicTime.nanoseconds() + 10_000_000_000)
        let returned = crossing.returned.withLock { $0 }
        #expect(returned == 2, "\(returned) of the two replacements returned: the others wait for each other")
        // Threads that wait for each other for ever cannot be joined, nor the engine destroyed.
        guard returned == 2 else { return }
        unplugging.join()
        replugging.join()
        lh_engine_destroy(rig.engine)
    }

    /// Two engines' stopped handlers, running at once on their unplugging threads, each replacing the other
    /// engine's: neither waits for the other, as with one engine's two handlers.
    final class CrossingEngines: Sendable {
        let engines: [UInt]
        let entered = [DeadlineWaiter(), DeadlineWaiter()]
        let returned = Lock(0)
        let bothReturned = DeadlineWaiter()

        init(_ first: OpaquePointer, _ second: OpaquePointer) {
            engines = [first, second].map { UInt(bitPattern: Int(bitPattern: UnsafeRawPointer($0))) }
        }

        func handle(_ index: Int) -> OpaquePointer { OpaquePointer(bitPattern: engines[index])! }
        var user: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
        static func from(_ user: UnsafeMutableRawPointer?) -> CrossingEngines {
            Unmanaged<CrossingEngines>.fromOpaque(user!).takeUnretainedValue()
        }

        /// Engine `index`'s handler: once the other engine's handler runs too, replaces that one.
        func cross(from index: Int) {
            entered[index].signal()
            entered[1 - index].wait(untilNanoseconds: MonotonicTime.nanoseconds() + 10_000_000_000)
            // Pass the wake-up on: the other handler may not have read it yet.
            entered[1 - index].signal()
            lh_engine_set_stopped_handler(handle(1 - index), nil, nil)
            if returned.withLock({ count in
                count += 1
                return count == 2
            }) {
                bothReturned.signal()
            }
        }
    }

    static let firstEnginesHandler: lh_stopped_handler = { _, user in CrossingEngines.from(user).cross(from: 0) }
    static let secondEnginesHandler: lh_stopped_handler = { _, user in CrossingEngines.from(user).cross(from: 1) }

    @Test func twoEnginesHandlersReplacingEachOthersAtOnceBothReturnRatherThanWaitForEachOtherForEver() throws {
        let first = try CEngineRig()
        let second = try CEngineRig()
        let crossing = CrossingEngines(first.engine, second.engine)
        lh_engine_set_stopped_handler(first.engine, Self.firstEnginesHandler, crossing.user)
        lh_engine_set_stopped_handler(second.engine, Self.secondEnginesHandler, crossing.user)
        let unplugging = try [first.recorder, second.recorder].map { recorder in
            try ServiceThread.start { recorder.unplug() }
        }
        crossing.bothReturned.wait(untilNanoseconds: MonotonicTime.nanoseconds() + 10_000_000_000)
        let returned = crossing.returned.withLock { $0 }
        #expect(returned == 2, "\(returned) of the two replacements returned: the others wait for each other")
        guard returned == 2 else { return }
        for thread in unplugging { thread.join() }
        lh_engine_destroy(first.engine)
        lh_engine_destroy(second.engine)
    }
}
