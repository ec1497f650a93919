// Pads with one motor (a Joy-Con: hid-nintendo plays the strong level on a left Joy-Con and the weak level on a
// right one) driven beside other pads under one mix (`DeviceSelection.allGamepads`).
import HapticRendering
import HapticTestDevices
@testable import LinuxHaptics
import Testing

@Suite struct OneMotorPadTests {
    static let left = RenderProfile.switchPro.withMotors(strong: true, weak: false)
    static let right = RenderProfile.switchPro.withMotors(strong: false, weak: true)

    /// A pad with one motor plays the louder level of a mix made for two on it, which is any one event's whole level;
    /// a pad with both plays the mix as it is.
    @Test func aPadWithOneMotorPlaysTheLouderLevelOfATwoMotorMixOnIt() {
        let mix = MotorMagnitudes(strong: 0.3, weak: 0.7)
        #expect(Self.left.onItsMotors(mix) == MotorMagnitudes(strong: 0.7, weak: 0))
        #expect(Self.right.onItsMotors(mix) == MotorMagnitudes(strong: 0, weak: 0.7))
        #expect(RenderProfile.switchPro.onItsMotors(mix) == mix)
        // A mix rendered for the one motor is played as it is.
        #expect(Self.left.onItsMotors(MotorMagnitudes(strong: 0.4, weak: 0)) == MotorMagnitudes(strong: 0.4, weak: 0))
    }

    /// Pads driven as one share their profile; pads that differ only in their motors (a left and a right Joy-Con, a
    /// Joy-Con beside a Pro Controller) share it with both motors; others share the generic profile. Until
    /// 7 December a left and a right Joy-Con shared the generic one: a dull pattern played on the left one alone, a
    /// sharp one on the right one alone, and hid-nintendo got the generic write budget.
    @Test func padsThatDifferOnlyInTheirMotorsShareTheirProfileWithBothMotors() {
        #expect(BroadcastOutput.sharedProfile(of: [Self.left, Self.right]) == .switchPro)
        #expect(BroadcastOutput.sharedProfile(of: [Self.left, .switchPro]) == .switchPro)
        #expect(BroadcastOutput.sharedProfile(of: [Self.left, Self.left]) == Self.left)
        #expect(BroadcastOutput.sharedProfile(of: [.switchPro, .switchPro]) == .switchPro)
        #expect(BroadcastOutput.sharedProfile(of: [Self.left, .dualSense]) == .genericRumble)
        #expect(BroadcastOutput.sharedProfile(of: [.xpad, .dualSense]) == .genericRumble)
    }

    /// Driven as one, a member with one motor is sent the mix folded onto it for the `all` locality alone: a handle's
    /// locality keeps its side, and the Joy-Con of the other side plays nothing (the fold sent a left-handle pattern
    /// to a right Joy-Con's motor, until the same day it was added).
    @Test func aMemberWithOneMotorIsSentTheMixFoldedOntoItForAllAlone() {
        let leftHandle = MotorMagnitudes(strong: 0.8, weak: 0)
        #expect(
            BroadcastOutput.levels(leftHandle, for: Self.right, folding: true) == MotorMagnitudes(strong: 0, weak: 0.8))
        #expect(BroadcastOutput.levels(leftHandle, for: Self.right, folding: false) == leftHandle)
        #expect(BroadcastOutput.levels(leftHandle, for: .switchPro, folding: true) == leftHandle)
    }

    /// A left and a right Joy-Con under the shared mix both play a dull tone and a sharp one at its whole level.
    @Test(arguments: [0.0, 0.5, 1.0])
    func bothJoyConsPlayATwoMotorMixAtItsWholeLevel(sharpness: Double) {
        let shared = BroadcastOutput.sharedProfile(of: [Self.left, Self.right])
        let timeline = PatternRenderer(profile: shared).render(
            AHAPFixtures.tone(seconds: 0.4, intensity: 0.8, sharpness: sharpness))
        let mix = timeline.levels(at: 0.2)
        #expect(abs(Self.left.onItsMotors(mix).strong - 0.8) < 1e-9, "left Joy-Con, mix \(mix)")
        #expect(abs(Self.right.onItsMotors(mix).weak - 0.8) < 1e-9, "right Joy-Con, mix \(mix)")
    }
}
