// A PID device's effect stream at work without a device: a recording stands in for the event node's effect slots
// (uploads, plays, stops, erases, each at the time the stream made it), and a `SteppedClock` for the monotonic
// clock, so the stream's own thread makes each call at the time it asked for however late the machine runs it.
// Its timing against the real driver, on the real clock, is the kernel tests' (pid/).
import AHAP
import Foundation
import HapticRendering
import LinuxInput
import Testing

@testable import LinuxHaptics

@Suite struct PeriodicEffectStreamWorkTests {
    /// Effect slots that remember every call made on them and when (on `clock`). A new slot takes
    /// `newSlotRoundTrip` of the clock (the device is asked for a block and its index read back), during which
    /// the work stands still; the device holds `capacity` effects and refuses more (ENOSPC).
    final class RecordingSlots: ForceEffectSlots, @unchecked Sendable {
        enum Kind: Equatable { case newSlot, refused, update, play, stop, erase }
        struct Call: Equatable {
            var kind: Kind
            var slot: Int16
            /// The magnitude uploaded, for an upload.
            var magnitude: Int16?
            var at: Double
        }

        let node = "/dev/input/event-recorded"
        private let clock: SteppedClock
        private let newSlotRoundTrip: Double
        private let lock = NSLock()
        private var capacityLeft: Int
        private var held: Set<Int16> = []
        private var recorded: [Call] = []

        init(clock: SteppedClock, capacity: Int = 16, newSlotRoundTrip: Double = 0) {
            self.clock = clock
            capacityLeft = capacity
            self.newSlotRoundTrip = newSlotRoundTrip
        }

        var calls: [Call] { lock.withLock { recorded } }
        var heldSlots: Set<Int16> { lock.withLock { held } }
        /// Another program let `count` blocks go.
        func free(_ count: Int) { lock.withLock { capacityLeft += count } }

        private func record(_ kind: Kind, _ slot: Int16, magnitude: Int16? = nil) {
            let now = clock.now
            lock.withLock { recorded.append(Call(kind: kind, slot: slot, magnitude: magnitude, at: now)) }
        }

        func upload(_ effect: ForceFeedbackEffect) throws(EventDeviceError) -> Int16 {
            var magnitude: Int16?
            if case .periodic(_, _, let units, _, _, _) = effect.kind { magnitude = units }
            guard effect.id == -1 else {
                record(.update, effect.id, magnitude: magnitude)
                return effect.id
            }
            clock.stall(for: newSlotRoundTrip)
            let slot: Int16? = lock.withLock {
                guard capacityLeft > 0 else { return nil }
                capacityLeft -= 1
                let free = (Int16(0)...).first { !held.contains($0) } ?? 0
                held.insert(free)
                return free
            }
            guard let slot else {
                record(.refused, -1, magnitude: magnitude)
                throw EventDeviceError(kind: .noEffectSlot, operation: "upload effect", node: node, underlying: nil)
            }
            record(.newSlot, slot, magnitude: magnitude)
            return slot
        }

        func play(effectID: Int16, count: Int32) throws(EventDeviceError) { record(.play, effectID) }
        func stop(effectID: Int16) throws(EventDeviceError) { record(.stop, effectID) }
        func erase(effectID: Int16) throws(EventDeviceError) {
            record(.erase, effectID)
            lock.withLock {
                if held.remove(effectID) != nil { capacityLeft += 1 }
            }
        }
    }

    /// A stream on a stepped clock, with its device; times are counted from when it opened (`origin`).
    struct Stepped {
        let clock = SteppedClock(startingAt: 100)
        let device: RecordingSlots
        let stream: PeriodicEffectStream
        /// When the stream had opened: after its ready slots' round trips.
        let origin: Double

        init(capacity: Int = 16, newSlotRoundTrip: Double = 0) throws {
            device = RecordingSlots(clock: clock, capacity: capacity, newSlotRoundTrip: newSlotRoundTrip)
            stream = try PeriodicEffectStream(
                device: device, profile: .periodicForce, clock: clock, logger: quietLogger())
            origin = clock.now
        }

        /// Plays `pattern` once from now; returns the source's id.
        @discardableResult
        func play(_ pattern: HapticPattern, rate: Double = 1) -> Int {
            let program = NativePeriodicProgram(pattern: pattern, profile: .periodicForce)
            return stream.play(
                PeriodicSource(program: program, offset: 0, rate: rate),
                atNanoseconds: MonotonicClock.nanoseconds(clock.now))
        }

        /// Milliseconds from `origin` to each call of `kind` (of `slot`, when given).
        func milliseconds(of kind: RecordingSlots.Kind, slot: Int16? = nil) -> [Int] {
            device.calls.filter { $0.kind == kind && (slot == nil || $0.slot == slot) }.map(milliseconds)
        }

        func milliseconds(_ call: RecordingSlots.Call) -> Int { Int(((call.at - origin) * 1000).rounded()) }
    }

    /// A continuous event of `intensity` (each test's events have their own, to tell their uploads apart).
    static func tone(at time: Double, for duration: Double, intensity: Double) -> HapticEvent {
        HapticEvent(
            type: .hapticContinuous,
            parameters: [
                HapticEventParameter(parameterID: .hapticIntensity, value: intensity),
                HapticEventParameter(parameterID: .hapticSharpness, value: 0.5),
            ], relativeTime: time, duration: duration)
    }

    /// The magnitude the device is sent for `intensity`.
    static func magnitude(_ intensity: Double) -> Int16 {
        let program = NativePeriodicProgram(
            pattern: HapticPattern(events: [tone(at: 0, for: 0.1, intensity: intensity)], parameters: []),
            profile: .periodicForce)
        return program.effects[0].magnitudeUnits
    }

    @Test func anEffectGoesIntoAReadySlotItsLeadBeforeItsStartAndPlaysAtItsStartAndCloseErasesEverySlot() throws {
        let stepped = try Stepped()
        stepped.play(HapticPattern(events: [Self.tone(at: 0.5, for: 0.2, intensity: 0.5)], parameters: []))
        stepped.clock.advance(by: 1)
        #expect(stepped.milliseconds(of: .newSlot) == [0, 0], "the two ready slots, taken when the stream opens")
        let uploads = stepped.device.calls.filter { $0.kind == .update }
        #expect(uploads.map(stepped.milliseconds) == [420], "80 ms before its start, into a slot already held")
        #expect(uploads.first?.magnitude == Self.magnitude(0.5))
        let slot = try #require(uploads.first?.slot)
        #expect(stepped.milliseconds(of: .play) == [500] && stepped.milliseconds(of: .play, slot: slot) == [500])
        #expect(stepped.milliseconds(of: .stop).isEmpty, "it ends by its own length")
        #expect(stepped.milliseconds(of: .erase).isEmpty, "the ready slots are kept while the stream is open")
        stepped.stream.close()
        #expect(stepped.device.calls.filter { $0.kind == .erase }.map(\.slot).sorted() == [0, 1])
        #expect(stepped.device.heldSlots.isEmpty)
    }

    /// A tone longer than a device is sent (30 s at rate 0.5 lasts 60 s; 0x7fff ms is the most): two effects play
    /// one after the other, the second at the first's end, and the device is never sent a longer one (0xffff, where
    /// 60 s was clamped, is PID's "infinite").
    @Test func aToneLongerThanADeviceTakesPlaysAsTwoEffectsOneAfterTheOther() throws {
        let stepped = try Stepped()
        stepped.play(HapticPattern(events: [Self.tone(at: 0.5, for: 30, intensity: 0.5)], parameters: []), rate: 0.5)
        stepped.clock.advance(by: 62)
        #expect(stepped.milliseconds(of: .play) == [1000, 1000 + 32767], "\(stepped.device.calls)")
        #expect(stepped.device.calls.filter { $0.kind == .update }.allSatisfy { $0.magnitude == Self.magnitude(0.5) })
        stepped.stream.close()
    }

    @Test func aStartWithMoreEffectsDueThanReadySlotsPlaysThoseInReadySlotsBeforeAskingTheDeviceForABlock() throws {
        // Three tones at once and two ready slots: the third needs a block from the device, a 12 ms round trip
        // (what an upload into a new block took under emulation). The two in ready slots play at the start, not
        // after that round trip.
        let stepped = try Stepped(newSlotRoundTrip: 0.012)
        stepped.play(
            HapticPattern(
                events: [0.3, 0.6, 0.9].map { Self.tone(at: 0, for: 0.2, intensity: $0) }, parameters: []))
        stepped.clock.advance(by: 0.5)
        #expect(stepped.milliseconds(of: .play) == [0, 0, 12])
        #expect(stepped.milliseconds(of: .newSlot) == [-12, 0, 12], "the ready slots as it opened, then a block")
    }

    @Test func anEffectNoSlotOfOursCanTakeBeforeItsEndIsLeftOutAndCountedWhenTheDeviceIsFull() throws {
        // The device holds the two ready slots and no more. Two tones hold them until 0.3 s; a third, 0.29 to
        // 0.31 s, is refused a block. A slot of ours that ended by its length is taken again only 20 ms after its
        // end (0.32 s), after the third's end: it is left out then, and counted, not kept waiting until its end.
        let stepped = try Stepped(capacity: 2)
        stepped.play(
            HapticPattern(
                events: [
                    Self.tone(at: 0, for: 0.3, intensity: 0.3), Self.tone(at: 0, for: 0.3, intensity: 0.6),
                    Self.tone(at: 0.29, for: 0.02, intensity: 0.9),
                ], parameters: []))
        stepped.clock.advance(by: 0.5)
        let refused = stepped.device.calls.filter { $0.kind == .refused }
        #expect(refused.map(stepped.milliseconds) == [210], "asked for a block once, its lead before its start")
        #expect(refused.first?.magnitude == Self.magnitude(0.9))
        #expect(stepped.milliseconds(of: .play) == [0, 0], "the third never plays")
        #expect(stepped.stream.leftOut == 1)
    }

    @Test func aDeviceThatWasFullIsAskedAgainASecondLaterRatherThanEffectsWaitingForOurSlotsWhileAPlayerPlays()
        throws
    {
        // The device holds two effects: two tones hold the ready slots from 0 to 2 s, and a tone at 0.5 s is
        // refused. Another program then lets a block go. A tone at 1.6 s, whose slot of ours would come free only
        // at 2.02 s, gets that block from the device and plays at its start: a second after the refusal, the
        // device is asked again.
        let stepped = try Stepped(capacity: 2)
        stepped.play(
            HapticPattern(
                events: [
                    Self.tone(at: 0, for: 2, intensity: 0.3), Self.tone(at: 0, for: 2, intensity: 0.6),
                    Self.tone(at: 0.5, for: 0.1, intensity: 0.9), Self.tone(at: 1.6, for: 0.9, intensity: 0.45),
                ], parameters: []))
        stepped.clock.advance(by: 1)
        #expect(stepped.device.calls.filter { $0.kind == .refused }.map(stepped.milliseconds) == [420])
        stepped.device.free(1)
        stepped.clock.advance(by: 2)
        let late = try #require(stepped.device.calls.first { $0.magnitude == Self.magnitude(0.45) })
        #expect(late.kind == .newSlot && stepped.milliseconds(late) == 1520)
        #expect(stepped.milliseconds(of: .play, slot: late.slot) == [1600])
        #expect(stepped.stream.leftOut == 1, "the tone at 0.5 s, which no slot could take before its end")
    }

    @Test func aSlotWhoseEffectEndedByItsLengthIsStoppedAndRefilled20MsAfterItsEndAndOnlyTheReadyOnesAreKept() throws {
        // Three tones at once (the two ready slots and a new block) end at 0.1 s; a fourth at 0.2 s is uploaded
        // at 0.12 s, into one of their slots: stopped first (a device may keep an effect playing), refilled, played
        // at its start. Once the player is stopped, nothing plays: of the three slots, the one kept longest in
        // reserve goes back to the device, and the two freed last stay ready.
        let stepped = try Stepped()
        let id = stepped.play(
            HapticPattern(
                events: [0.3, 0.6, 0.9].map { Self.tone(at: 0, for: 0.1, intensity: $0) } + [
                    Self.tone(at: 0.2, for: 0.1, intensity: 0.45)
                ], parameters: []))
        stepped.clock.advance(by: 0.5)
        let refill = try #require(stepped.device.calls.first { $0.magnitude == Self.magnitude(0.45) })
        #expect(refill.kind == .update && stepped.milliseconds(refill) == 120)
        #expect(stepped.milliseconds(of: .stop, slot: refill.slot) == [120], "stopped before it is refilled")
        #expect(stepped.milliseconds(of: .play, slot: refill.slot) == [0, 200])
        #expect(stepped.milliseconds(of: .newSlot) == [0, 0, 0], "two ready slots and one block for the third tone")
        #expect(stepped.milliseconds(of: .erase).isEmpty, "slots are kept while the player plays")
        stepped.stream.stop(id)
        stepped.clock.advance(by: 0.01)
        let erased = stepped.device.calls.filter { $0.kind == .erase }
        #expect(erased.map(stepped.milliseconds) == [500], "as the stop is taken")
        #expect(erased.first?.slot != refill.slot, "the slot freed last is kept ready")
        #expect(stepped.device.heldSlots.count == 2)
    }

    @Test func aPlayerStoppedMidEffectHasItStoppedThenAndItsSlotTakesTheNextEffectAtOnceWithNoSecondStop() throws {
        // A one-second tone, its player stopped at 0.3 s; a tone started at 0.35 s goes into the stopped slot (the
        // other ready slot holds nothing) with no stop of its own: its slot was stopped already.
        let stepped = try Stepped()
        let first = stepped.play(HapticPattern(events: [Self.tone(at: 0, for: 1, intensity: 0.3)], parameters: []))
        stepped.stream.stop(first, atNanoseconds: MonotonicClock.nanoseconds(stepped.origin + 0.3))
        stepped.clock.advance(by: 0.35)
        let slot = try #require(stepped.device.calls.first { $0.kind == .play }?.slot)
        #expect(stepped.milliseconds(of: .stop) == [300] && stepped.milliseconds(of: .stop, slot: slot) == [300])
        stepped.play(HapticPattern(events: [Self.tone(at: 0, for: 0.1, intensity: 0.6)], parameters: []))
        stepped.clock.advance(by: 0.2)
        let second = try #require(stepped.device.calls.first { $0.magnitude == Self.magnitude(0.6) })
        #expect(second.kind == .update && stepped.milliseconds(second) == 350)
        #expect(stepped.milliseconds(of: .play) == [0, 350])
        #expect(stepped.milliseconds(of: .stop) == [300], "no second stop")
    }
}
