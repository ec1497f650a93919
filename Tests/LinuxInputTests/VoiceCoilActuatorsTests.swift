// Which pads have voice coils, and what is said when they cannot be driven.
import Testing

@testable import LinuxInput

@Suite struct VoiceCoilActuatorsTests {
    static func identity(vendor: UInt16, product: UInt16, bus: InputBus) -> InputDeviceIdentity {
        InputDeviceIdentity(
            name: "pad", bus: bus, vendor: vendor, product: product, version: 1, uniq: "", phys: "",
            sysName: "event99", node: "/dev/input/event99", sysPath: "/sys/class/input/event99")
    }

    @Test func padsOtherThanTheDualSenseHaveNone() {
        #expect(
            VoiceCoilActuators.find(identity: Self.identity(vendor: 0x045e, product: 0x0b13, bus: .bluetooth)) == nil)
        #expect(VoiceCoilActuators.find(identity: Self.identity(vendor: 0x054c, product: 0x09cc, bus: .usb)) == nil)
    }

    @Test func aDualSenseOverUSBHasThemButTheyAreNotDrivenAndTheReasonSaysUSB() throws {
        let coils = try #require(
            VoiceCoilActuators.find(identity: Self.identity(vendor: 0x054c, product: 0x0ce6, bus: .usb)))
        #expect(coils.node == nil && !coils.isDrivable)
        #expect(coils.unavailableReason?.contains("USB") == true)
    }

    @Test func aDualSenseEdgeOverBluetoothWithoutAHidrawNodeSaysSo() throws {
        let coils = try #require(
            VoiceCoilActuators.find(identity: Self.identity(vendor: 0x054c, product: 0x0df2, bus: .bluetooth)))
        #expect(!coils.isDrivable)
        #expect(coils.unavailableReason?.contains("no hidraw node") == true)
    }

    @Test func aNodeThatMayNotBeWrittenNamesTheUdevRule() {
        #expect(VoiceCoilActuators.notWritable("/dev/hidraw3").contains("udev/70-haptics-gamepads.rules"))
    }
}
