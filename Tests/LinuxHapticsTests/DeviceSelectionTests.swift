// How a device is named to the library (`haptics --device`, `lh_engine_create`): the one grammar.
import LinuxHaptics
import LinuxInput
import Testing

@Suite struct DeviceSelectionTests {
    @Test(arguments: [
        ("all", DeviceSelection.allGamepads),
        ("/dev/input/event5", .node("/dev/input/event5")),
        ("/dev/input/by-id/usb-pad-event-joystick", .node("/dev/input/by-id/usb-pad-event-joystick")),
        ("event12", .node("/dev/input/event12")),
        ("usb-045e:028e-1a2b3c4d", .id(StableDeviceID(rawValue: "usb-045e:028e-1a2b3c4d"))),
        ("allpads", .id(StableDeviceID(rawValue: "allpads"))),
    ])
    func aNameSelectsItsDevice(_ name: String, _ selection: DeviceSelection) {
        #expect(DeviceSelection(naming: name) == selection)
    }

    @Test func theEmptyNameSelectsNothing() {
        #expect(DeviceSelection(naming: "") == nil)
    }
}
