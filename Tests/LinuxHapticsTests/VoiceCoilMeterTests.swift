// What the voice coils play now (`VoiceCoilMeter`, behind `HapticEngine.actuatorActivity`), from the blocks a
// stream wrote and when each is heard.
import Foundation
import Testing

@testable import LinuxHaptics

@Suite struct VoiceCoilMeterTests {
    /// A tap's burst (10 ms at 125 Hz, full) heard on time, then the silent blocks a stream writes after it:
    /// 20 ms in (where `haptics feedback` and `replay` read a tap) the meter holds the burst's peak; 100 ms on,
    /// silence. Over the last block alone it read 0 at 20 ms, and the commands printed each tap at 0.
    @Test func twentyMillisecondsIntoATapTheMeterHoldsItsBurstsPeak() {
        var meter = VoiceCoilMeter(sampleRate: 3000)
        let start: UInt64 = 5_000_000_000
        let burst = (0..<30).map { Float(sin(2 * Double.pi * 125 * Double($0) / 3000)) }
        let silence = [Float](repeating: 0, count: 30)
        meter.record(left: burst, right: burst, heard: start)
        for block in 1...20 {
            meter.record(left: silence, right: silence, heard: start + UInt64(block) * 10_000_000)
        }
        let tap = meter.activity(at: start + 20_000_000)
        #expect(tap.left > 0.9 && tap.right > 0.9, "\(tap)")
        let after = meter.activity(at: start + 100_000_000)
        #expect(after.left == 0 && after.right == 0, "\(after)")
    }

    /// A sound card's periods of 10 ms (48 kHz), each recorded with the `heard` the writer estimates from
    /// `snd_pcm_delay` before it writes: here every other estimate 3 ms early (jitter), the others exact, the
    /// frames contiguous on the card. A 10 ms tap at T read 20 ms in, 240 ms later, is the tap. Taken as they
    /// came, each early estimate moved every frame kept before it 3 ms earlier, and the tap read 0.
    @Test func aPastMomentStaysInPlaceThroughAnEstimatesJitter() {
        var meter = VoiceCoilMeter(sampleRate: 48000)
        let start: UInt64 = 10_000_000_000
        let period = 480
        let tap: [Float] = (0..<period).map { (frame: Int) -> Float in
            Float(sin(2 * Double.pi * 125 * Double(frame) / 48000))
        }
        let silence = [Float](repeating: 0, count: period)
        meter.record(left: tap, right: tap, heard: start)
        #expect(meter.activity(at: start + 20_000_000).left > 0.9, "read at once")
        for block in 1...24 {
            let exact = start + UInt64(block) * 10_000_000
            meter.record(left: silence, right: silence, heard: block % 2 == 1 ? exact - 3_000_000 : exact)
        }
        let then = meter.activity(at: start + 20_000_000)
        #expect(then.left > 0.9, "the tap played at T..T+10 ms; read 240 ms later: \(then)")
    }
}
