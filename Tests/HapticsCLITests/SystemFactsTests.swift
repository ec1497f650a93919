import Foundation
@testable import LinuxInput
import Testing

@testable import haptics

/// What the commands say that depends on what this system has (a udev daemon, `/dev/input`, input devices): each
/// branch on any machine, the facts handed to the decision instead of read from it; and that by default they are
/// this system's.
struct SystemFactsTests {
    static let missingNode = DeviceSelector.node("/dev/input/event999")

    /// An input device with no force feedback, as a keyboard is.
    static let keyboard: InputDevice = {
        let identity = InputDeviceIdentity(
            name: "Keyboard", bus: .usb, vendor: 0x1234, product: 0x5678, version: 1, sysName: "event2",
            node: "/dev/input/event2", sysPath: "/sys/devices/virtual/input/input2/event2")
        return InputDevice(
            id: identity.stableID, identity: identity,
            capabilities: InputDeviceCapabilities(bits: CapabilityBits(), maxEffects: nil), access: .readWrite,
            isGamepad: false, gamepadEvidence: .judged, capabilitySource: .evdev, driver: nil)
    }()

    /// The `CommandFailure` that `body` throws, as the user reads it after `haptics COMMAND: `.
    func failure(_ body: () throws -> InputDevice) -> String? {
        do {
            _ = try body()
            Issue.record("no failure")
            return nil
        } catch let failure as CommandFailure {
            return failure.description
        } catch {
            Issue.record("not a CommandFailure: \(error)")
            return nil
        }
    }

    static let noDevInput = "this system has no /dev/input (no evdev devices, or a container or VM without them)"
    static let noDeviceListed = "this system lists no input device at all"

    @Test(arguments: [(false, noDevInput), (true, noDeviceListed)])
    func aDeviceNamedOnASystemWithNoDeviceSaysWhyAndHowToGetOne(inputDirectoryExists: Bool, reason: String) {
        let listing = DeviceListing(all: [], inputDirectoryExists: inputDirectoryExists)
        #expect(
            failure { try Self.missingNode.inputDevice(in: listing) }
                == "no input device \"/dev/input/event999\": \(reason)\n\(DeviceListing.noDevicesFix)")
    }

    @Test func aDeviceNamedThatIsNotAmongThoseListedSaysWhereToSeeThem() {
        let listing = DeviceListing(all: [Self.keyboard], inputDirectoryExists: true)
        #expect(
            failure { try Self.missingNode.inputDevice(in: listing) }
                == "no input device \"/dev/input/event999\"\n"
                + "`haptics devices --all` lists them; name one by its node or id.")
    }

    @Test(arguments: [(false, noDevInput), (true, noDeviceListed)])
    func probeWithNoDeviceNamedOnASystemWithNoDeviceSaysWhyAndHowToGetOne(inputDirectoryExists: Bool, reason: String) {
        let listing = DeviceListing(all: [], inputDirectoryExists: inputDirectoryExists)
        #expect(
            failure { try ProbeCommand.firstRumbleDevice(in: listing) }
                == "no input device to probe: \(reason)\n\(DeviceListing.noDevicesFix)")
    }

    @Test func probeWithNoDeviceNamedAmongDevicesWithoutRumbleSaysToNameOne() {
        let listing = DeviceListing(all: [Self.keyboard], inputDirectoryExists: true)
        #expect(
            failure { try ProbeCommand.firstRumbleDevice(in: listing) }
                == "no rumble-capable device to probe: none among 1 input device(s)\n"
                + "Name one (`haptics devices --all` lists them).")
    }

    @Test func devicesOnASystemWithNoDeviceSaysWhyWhenThereIsNoDevInput() {
        #expect(
            DeviceListing(all: [], inputDirectoryExists: false).noDevicesMessage
                == "No input devices found: \(Self.noDevInput). \(DeviceListing.noDevicesFix)")
        #expect(
            DeviceListing(all: [], inputDirectoryExists: true).noDevicesMessage
                == "No input devices found. \(DeviceListing.noDevicesFix)")
    }

    @Test func aListingSaysWhetherThisSystemHasDevInput() throws {
        let listing = try DeviceListing(logger: .haptics(verbose: false))
        #expect(listing.inputDirectoryExists == FileManager.default.fileExists(atPath: "/dev/input"))
    }

    @Test func theUdevSourceWarnsThatItHearsNothingWhereNoUdevDaemonRuns() {
        #expect(
            MonitorCommand.warning(for: .udev, daemonRuns: false)
                == "warning: no udev daemon runs (/run/udev/control is missing), so the udev source hears nothing; "
                + "leave --source out, or pass --source kernel")
        #expect(MonitorCommand.warning(for: .udev, daemonRuns: true) == nil)
        for source in [DeviceMonitor.Source.kernel, .inotify] {
            #expect(MonitorCommand.warning(for: source, daemonRuns: false) == nil, "\(source)")
        }
    }

    @Test func theMonitorsWarningFollowsThisSystemsUdevDaemonByDefault() {
        let daemon = FileManager.default.fileExists(atPath: "/run/udev/control")
        #expect((MonitorCommand.warning(for: .udev) == nil) == daemon)
    }
}
