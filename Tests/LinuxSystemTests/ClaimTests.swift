// The lock-free pieces before a device write: a slot that a second claimant passes over instead of waiting for,
// and a gate whose shutting waits for the calls in flight and lets no later one in.
import Glibc
import Testing
@_spi(Internals) @testable import LinuxSystem

@Suite struct ClaimTests {
    /// Yields until `condition` holds; ten seconds without it is the test's failure, not a hang of the run.
    static func spin(until condition: () -> Bool, _ what: String) throws {
        let deadline = Sys.monotonicNanoseconds() + 10_000_000_000
        while !condition() {
            try #require(Sys.monotonicNanoseconds() < deadline, "waited 10 s for \(what)")
            Sys.yield()
        }
    }

    @Test func aSlotClaimedByOneCallIsPassedOverByAnotherNotWaitedFor() {
        let slot = ClaimSlots<Int>(count: 1)
        slot.withClaimWaiting { $0 = 1 }
        let inner = slot.withClaim { outer -> Int?? in
            outer = 2
            return slot.withClaim { $0 }
        }
        #expect(inner == .some(nil), "the nested claim returned at once, with nothing")
        #expect(slot.withClaim { $0 } == 2, "the first claim's change stays")
    }

    @Test func threadsClaimingOneSlotTogetherLoseNoChange() throws {
        let slot = ClaimSlots<Int>(count: 1)
        slot.withClaimWaiting { $0 = 0 }
        let threads = try (0..<4).map { _ in
            try ServiceThread.start { for _ in 0..<10_000 { slot.withClaimWaiting { $0! += 1 } } }
        }
        threads.forEach { $0.join() }
        #expect(slot.withClaim { $0 } == 40_000)
    }

    @Test func eachValueOfATableIsClaimedOnItsOwnAndAFailedClaimChangesNoOther() {
        let slots = ClaimSlots<Int>(count: 3)
        for index in 0..<3 { slots.withClaimWaiting(index) { $0 = index * 10 } }
        let inner = slots.withClaim(1) { outer -> [Int??] in
            outer = 11
            // Value 1 is held here: another claim of it fails; the others are free.
            return [slots.withClaim(0) { $0 }, slots.withClaim(1) { $0 }, slots.withClaim(2) { $0 }]
        }
        #expect(inner == [.some(.some(0)), .none, .some(.some(20))], "value 1 held: its claim fails, the others' hold")
        #expect((0..<3).map { index in slots.withClaim(index) { $0 } } == [0, 11, 20])
    }

    @Test func threadsClaimingNeighbouringValuesTogetherLoseNoChange() throws {
        let slots = ClaimSlots<Int>(count: 4)
        for index in 0..<4 { slots.withClaimWaiting(index) { $0 = 0 } }
        let threads = try (0..<4).map { thread in
            try ServiceThread.start {
                for round in 0..<10_000 { slots.withClaimWaiting((thread + round) % 4) { $0! += 1 } }
            }
        }
        threads.forEach { $0.join() }
        #expect((0..<4).map { index in slots.withClaim(index) { $0 } } == [10_000, 10_000, 10_000, 10_000])
    }

    @Test func aShutGateLetsNoCallInAndReportsWhoShutIt() {
        // The gate is not copyable: each result is read before it is checked.
        let gate = CallGate()
        let open = gate.pass { 1 }
        #expect(open == 1)
        let shutIt = gate.shut()
        #expect(shutIt)
        let shut = gate.isShut
        #expect(shut)
        let afterShut = gate.pass { 1 }
        #expect(afterShut == nil)
        let shutAgain = gate.shut()
        #expect(!shutAgain, "a second shut is not the one that shut it")
    }

    @Test func shuttingWaitsForTheCallInFlight() throws {
        /// The gate in an object, as its owners hold it, for both threads to use.
        final class Owner: Sendable { let gate = CallGate() }
        let owner = Owner()
        let inside = Lock(false)
        let leave = Lock(false)
        // Let go however the test ends, so that a failure leaves no thread spinning.
        defer { leave.withLock { $0 = true } }
        let finished = Lock(false)
        let caller = try ServiceThread.start {
            _ = owner.gate.pass {
                inside.withLock { $0 = true }
                while !leave.withLock({ $0 }) { Sys.yield() }
                finished.withLock { $0 = true }
            }
        }
        try Self.spin(until: { inside.withLock { $0 } }, "the call to begin")
        let finishedWhenShut = Lock(false)
        let closer = try ServiceThread.start {
            owner.gate.shut()
            finishedWhenShut.withLock { $0 = finished.withLock { $0 } }
        }
        try Self.spin(until: { owner.gate.isShut }, "the gate to shut")
        leave.withLock { $0 = true }
        closer.join()
        caller.join()
        #expect(finishedWhenShut.withLock { $0 }, "shut returned before the call in flight had finished")
    }

    /// A call that lasts (an upload to a uinput device whose server is slow: uinput waits up to 30 s) is waited
    /// for without keeping a processor busy: `shut()` yields between its first thousand looks at the call, then
    /// sleeps a millisecond between looks (it yielded in a loop, a whole core for as long as the call lasted). The
    /// processor time such a wait takes is a benchmark's figure; here, the rule `shut()` follows.
    @Test func aLongWaitSleepsBetweenLooksAfterAThousandYields() {
        #expect((0..<CallGate.yieldsBeforeSleeping).allSatisfy { CallGate.pause(afterLooks: $0) == .yield })
        #expect([1000, 1001, 30_000, Int.max].allSatisfy { CallGate.pause(afterLooks: $0) == .sleep })
    }

    @Test func aClosedDescriptorRunsNoCall() throws {
        let descriptor = SharedDescriptor(try Sys.open("/dev/null", flags: 0))
        #expect(descriptor.withDescriptor { $0 >= 0 } == true)
        #expect(descriptor.close())
        #expect(descriptor.withDescriptor { _ in true } == nil)
        #expect(!descriptor.close())
    }
}
