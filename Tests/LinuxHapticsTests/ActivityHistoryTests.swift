// What a stream's actuators played at a moment just past (`ActivityHistory`, behind
// `HapticEngine.actuatorActivity(atTime:)` on HD rumble and periodic effects), from the changes it sent.
import Testing

@testable import LinuxHaptics

@Suite struct ActivityHistoryTests {
    private static let tap = ActuatorActivity(left: 0.8, right: 0.8, frequency: 160)
    private static let tone = ActuatorActivity(left: 0.3, right: 0.5, frequency: 320)

    /// Each moment reads the last change sent at or before it; before the first, the actuators were at rest.
    @Test func aMomentReadsTheLastChangeSentAtOrBeforeIt() {
        var history = ActivityHistory()
        history.record(Self.tap, at: 10)
        history.record(.atRest, at: 10.03)
        history.record(Self.tone, at: 10.2)
        #expect(history.activity(at: 9.99) == .atRest)
        #expect(history.activity(at: 10) == Self.tap)
        #expect(history.activity(at: 10.02) == Self.tap)
        #expect(history.activity(at: 10.03) == .atRest)
        #expect(history.activity(at: 10.5) == Self.tone)
        #expect(history.latest == Self.tone)
    }

    /// A change sent every 10 ms for a minute: a moment a second back still reads what was sent then, and the
    /// history holds about a second's changes, not a minute's.
    @Test func aSecondBackIsKeptAndNoMore() {
        var history = ActivityHistory()
        for step in 0..<6000 {
            let level = Double(step % 100) / 100
            history.record(ActuatorActivity(left: level, right: level, frequency: nil), at: 100 + Double(step) / 100)
        }
        let last = 100 + 5999.0 / 100
        // 5 ms after the change of step 5903, just under a second before the last one.
        #expect(history.activity(at: last - 0.955).left == 0.03)
        #expect(history.changesKept <= 102, "\(history.changesKept) changes kept")
    }

    /// A change recorded after a later one (a report's time taken before the rest that ended the stream, written
    /// after it) takes its place in time: the moments after the rest read rest, not the report.
    @Test func aChangeRecordedLateTakesItsPlaceInTime() {
        var history = ActivityHistory()
        history.record(Self.tap, at: 10)
        history.record(.atRest, at: 10.05)
        history.record(Self.tone, at: 10.04)
        #expect(history.activity(at: 10.045) == Self.tone)
        #expect(history.activity(at: 10.2) == .atRest)
        #expect(history.latest == .atRest)
    }
}
