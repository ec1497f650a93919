// What `haptics emulate` says when no driver took the controller: the fix depends on whether the driver is there.
import Testing

@testable import HapticTestDevices

@Suite struct EmulationErrorTests {
    static func notBound(driverLoaded: Bool) -> String {
        EmulationError.notBound(
            model: "DualSense", driver: "hid-playstation", seconds: 3, found: "driver none, no rumble node",
            driverLoaded: driverLoaded
        ).description
    }

    /// A driver that is loaded but refused the controller (hid-playstation refuses a second pad with the address of
    /// one present) is not told to be loaded: the kernel log and another address are. Until 6 December both cases
    /// said "is its driver loaded?".
    @Test func aLoadedDriverThatDidNotTakeItPointsAtTheKernelLogAndTheAddress() {
        let text = Self.notBound(driverLoaded: true)
        #expect(!text.contains("modprobe"), "\(text)")
        #expect(text.contains("is loaded but did not take it") && text.contains("another --uniq"), "\(text)")
    }

    @Test func aMissingDriverIsToldToBeLoaded() {
        let text = Self.notBound(driverLoaded: false)
        #expect(text.hasSuffix("is its driver, hid-playstation, loaded (`modprobe hid-playstation`)?"), "\(text)")
    }
}
