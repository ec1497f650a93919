// The udev rule against the real systemd-udevd (scripts/vm-run --udevd): a virtual gamepad's node
// gets the rule's `uaccess` tag and its `haptics_gamepad` marker; a virtual keyboard's node gets neither.
// The ACL itself needs a logind seat, which the VM has not: the tags are what the rule controls.
import HapticTestDevices
import CLinuxInput
import CLinuxSystem
import Foundation
import Glibc
import LinuxInput

enum AppUdevSuite {
    static let suite: KernelTestSuite = KernelTestSuite(
        name: "app-udev", requires: [.uinput],
        tests: [
            KernelTest(name: "app/udev/gamepad-node-tagged-uaccess-by-our-rule", body: gamepadIsTagged),
            KernelTest(name: "app/udev/keyboard-node-not-tagged", body: keyboardIsNotTagged),
            KernelTest(
                name: "app/udev/a-pad-denied-with-the-rule-installed-is-told-to-replug-or-join-the-group",
                body: deniedWithTheRuleInstalled),
            KernelTest(
                name:
                    "app/udev/hidraw-nodes-of-dualsense-switch-pro-xbox-bt-tagged-uaccess-and-group-input-dualshock4-not",
                body: hidrawTagging),
            KernelTest(
                name: "app/udev/install-udev-applies-the-rule-to-a-pad-plugged-in-before-its-hidraw-node-too",
                body: installUdevAppliesTheRuleToAPadPresent),
        ])

    static let ruleName = "70-haptics-gamepads.rules"
    static let markerTag = "haptics_gamepad"
    /// The tag of the hidraw nodes the rule opens up (a DualSense's, for its voice coils).
    static let actuatorTag = "haptics_actuators"
    /// The tag of the motion nodes the rule opens up (a Switch controller's, whose reports pace its rumble).
    static let motionTag = "haptics_motion"
    /// udev reads rules from /run/udev/rules.d too: a runtime folder, so the test never leaves a rule
    /// behind in /etc on a host where it runs directly.
    static let runtimeRulesFolder = "/run/udev/rules.d"

    /// Where the rule is found: in `udev/` of the working directory (the repo, or the guest's /work, where vm-run
    /// copies it), or the working directory itself.
    static func ruleSource() throws -> String {
        for candidate in ["udev/\(ruleName)", ruleName] where access(candidate, R_OK) == 0 { return candidate }
        throw TestSkip(.udevRules, "\(ruleName) not found in ./udev/ (run: scripts/vm-run --udevd -- ...)")
    }

    /// Installs the rule for the test's duration and removes it afterwards.
    static func withRuleInstalled(_ body: () async throws -> Void) async throws {
        guard access("/run/udev/control", F_OK) == 0, onPath("udevadm") else {
            throw TestSkip(.udevd, "no udev daemon runs here (run the VM with --udevd)")
        }
        let source = try ruleSource()
        let target = "\(runtimeRulesFolder)/\(ruleName)"
        mkdir(runtimeRulesFolder, 0o755)
        try writeFile(target, try readFile(source))
        defer {
            unlink(target)
            _ = try? udevadm(["control", "--reload"])
        }
        try udevadm(["control", "--reload"])
        try await body()
    }

    /// `udevadm ARGUMENTS...`, through the device suite's runner (fails on a non-zero status).
    @discardableResult
    static func udevadm(_ arguments: [String]) throws -> String {
        try DeviceSuite.run(["udevadm"] + arguments)
    }

    /// udev's properties of an event node once its events are processed.
    static func properties(of node: String) throws -> [String: String] {
        try udevadm(["settle", "--timeout=30"])
        var properties: [String: String] = [:]
        for line in try udevadm(["info", "--query=property", "--name=\(node)"]).split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            properties[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return properties
    }

    /// `:seat:uaccess:` -> ["seat", "uaccess"].
    static func tags(_ value: String?) -> Set<String> {
        Set((value ?? "").split(separator: ":").map(String.init))
    }

    static func gamepadIsTagged() async throws {
        try await withRuleInstalled {
            let pad = try VirtualPadSuite.makePad()
            defer { pad.destroy() }
            let properties = try properties(of: pad.eventNode)
            try requireEqual(properties["ID_INPUT_JOYSTICK"], "1", "ID_INPUT_JOYSTICK of the virtual pad")
            for key in ["TAGS", "CURRENT_TAGS"] {
                let tags = tags(properties[key])
                try require(
                    tags.contains("uaccess"), "\(key) of \(pad.eventNode) lacks uaccess: \(properties[key] ?? "none")")
                try require(
                    tags.contains(markerTag), "\(key) of \(pad.eventNode) lacks \(markerTag): our rule did not run")
            }
            print("    \(pad.eventNode): TAGS=\(properties["TAGS"] ?? "")")
        }
    }

    /// As `nobody`, with the rule installed and no seat session (no logind in the guest, so no ACL): a pad's node
    /// left root's is probed denied, and the fix says the rule is installed, where, and to replug or join the group,
    /// not to install it (what it said until 6 December, to a user who had).
    static func deniedWithTheRuleInstalled() async throws {
        guard onPath("su") else { throw TestSkip(.su, "no su to run the CLI as another user") }
        try await withRuleInstalled {
            let pad = try VirtualPadSuite.makePad()
            defer { pad.destroy() }
            try udevadm(["settle", "--timeout=30"])
            try require(chmod(pad.eventNode, 0o600) == 0, "chmod 600: \(String(cString: strerror(errno)))")
            let text = try DeviceSuite.haptics(["probe", pad.eventNode], asNobody: true)
            // Where it is installed: here, unless another test left a copy in /etc/udev/rules.d, looked at first.
            try require(
                text.contains("the udev rule is installed (") && text.contains("/\(ruleName))")
                    && text.contains("usermod -aG input")
                    && !text.contains("make install-udev"),
                "the fix for a pad denied with the rule installed:\n\(text)")
            print("    " + (text.split(separator: "\n").first { $0.hasPrefix("To fix") } ?? ""))
        }
    }

    static func keyboardIsNotTagged() async throws {
        try await withRuleInstalled {
            let keyboard = try RawUinputKeyboard()
            defer { keyboard.destroy() }
            let properties = try properties(of: keyboard.eventNode)
            // Proof that udev did process the node (so missing tags mean something): it classified the keys.
            try requireEqual(properties["ID_INPUT_KEY"], "1", "ID_INPUT_KEY of the virtual keyboard")
            try require(properties["ID_INPUT_JOYSTICK"] == nil, "the keyboard was classified as a joystick")
            for key in ["TAGS", "CURRENT_TAGS"] {
                let tags = tags(properties[key])
                try require(!tags.contains("uaccess"), "\(key) of the keyboard has uaccess: \(properties[key] ?? "")")
                try require(!tags.contains(markerTag), "\(key) of the keyboard has \(markerTag)")
            }
            print("    \(keyboard.eventNode): TAGS=\(properties["TAGS"] ?? "(none)")")
        }
    }
}

extension AppUdevSuite {
    /// The rule opens the hidraw node of a DualSense (its voice coils), a Switch Pro Controller (HD rumble) and an
    /// Xbox Wireless Controller over Bluetooth (trigger motors), to the seat's user and to the `input` group, and
    /// not that of another pad with one (the DualShock 4's stays root's, mode 600); and a Switch controller's motion
    /// node, no other pad's.
    static func hidrawTagging() async throws {
        try await withRuleInstalled {
            for (model, tagged) in [
                (EmulatedModel.dualsenseBluetooth, true), (.switchPro, true), (.xboxOneBluetooth, true),
                (.dualshock4Bluetooth, false),
            ] {
                try await EmulationSuite.withController(model) { _, nodes in
                    guard
                        let node = HidrawDevice.node(besideEventNode: nodes.rumbleNode)
                    else { throw TestFailure(reason: "the \(model.rawValue) has no hidraw node") }
                    let properties = try properties(of: node)
                    for key in ["TAGS", "CURRENT_TAGS"] {
                        let tags = tags(properties[key])
                        try require(
                            tags.contains("uaccess") == tagged && tags.contains(actuatorTag) == tagged,
                            "\(key) of the \(model.rawValue)'s \(node): \(properties[key] ?? "(none)")")
                    }
                    // And given to the `input` group, for a member without a seat session; the others stay root's.
                    guard let group = getgrnam("input") else {
                        throw TestFailure(reason: "the guest has no input group")
                    }
                    var status = stat()
                    try require(stat(node, &status) == 0, "stat \(node): \(String(cString: strerror(errno)))")
                    let (gid, mode) = (status.st_gid, status.st_mode & 0o777)
                    try require(
                        tagged ? (gid == group.pointee.gr_gid && mode == 0o660) : (gid == 0 && mode == 0o600),
                        "the \(model.rawValue)'s \(node): group \(gid), mode \(String(mode, radix: 8))")
                    print(
                        "    \(model.rawValue) \(node): TAGS=\(properties["TAGS"] ?? "(none)") group \(gid) mode "
                            + String(mode, radix: 8))
                    // The Switch controller's motion node too (its reports pace the rumble frames), and no other
                    // pad's (the DualShock 4's motion sensors are a node of their own as well).
                    let eventName = nodes.rumbleNode.split(separator: "/").last.map(String.init) ?? ""
                    guard let motion = InputReportReader.motionNode(besideEvent: "/sys/class/input/" + eventName)
                    else { return try require(model != .switchPro, "the switch-pro has no motion node") }
                    let motionTags = tags(try Self.properties(of: motion)["TAGS"])
                    try require(
                        motionTags.contains(motionTag) == (model == .switchPro),
                        "TAGS of the \(model.rawValue)'s motion node \(motion): \(motionTags)")
                    print("    \(model.rawValue) \(motion): TAGS=\(motionTags.sorted().joined(separator: ":"))")
                }
            }
        }
    }
}

extension AppUdevSuite {
    /// `scripts/install-udev --apply` (what `make install` runs after copying the rule) applies the rule to a
    /// DualSense over Bluetooth plugged in before it: its event node and its hidraw node (the voice coils) get
    /// their tags without a replug. Reloading the rules alone leaves both untagged, so the script's own trigger
    /// is what tags them.
    static func installUdevAppliesTheRuleToAPadPresent() async throws {
        let script = "scripts/install-udev"
        try await EmulationSuite.withController(.dualsenseBluetooth) { _, nodes in
            guard let hidraw = HidrawDevice.node(besideEventNode: nodes.rumbleNode) else {
                throw TestFailure(reason: "the dualsense-bt has no hidraw node")
            }
            try await withRuleInstalled {
                guard access(script, X_OK) == 0 else {
                    throw TestSkip(
                        .udevRules, "\(script) not found in the working directory (scripts/vm-run copies it)")
                }
                let eventTags = tags(try properties(of: nodes.rumbleNode)["CURRENT_TAGS"])
                let hidrawTags = tags(try properties(of: hidraw)["CURRENT_TAGS"])
                try require(
                    !eventTags.contains(markerTag) && !hidrawTags.contains(actuatorTag),
                    "the pad's nodes were tagged before the rule was applied: \(eventTags), \(hidrawTags)")
                let output = try DeviceSuite.run([script, "--apply"])
                for (node, tag) in [(nodes.rumbleNode, markerTag), (hidraw, actuatorTag)] {
                    let current = tags(try properties(of: node)["CURRENT_TAGS"])
                    try require(
                        current.contains("uaccess") && current.contains(tag),
                        "CURRENT_TAGS of \(node) after \(script) --apply: \(current.sorted()) (its output: \(output))")
                    print("    \(node): CURRENT_TAGS=\(current.sorted().joined(separator: ":"))")
                }
            }
        }
    }
}

/// A uinput device with the letter keys A-Z and nothing else, set up with raw ioctls: the kind of node the
/// rule must never open up.
final class RawUinputKeyboard {
    private var fd: Int32
    let eventNode: String

    static let letterKeys: [Int32] = [
        KEY_A, KEY_B, KEY_C, KEY_D, KEY_E, KEY_F, KEY_G, KEY_H, KEY_I, KEY_J, KEY_K, KEY_L, KEY_M,
        KEY_N, KEY_O, KEY_P, KEY_Q, KEY_R, KEY_S, KEY_T, KEY_U, KEY_V, KEY_W, KEY_X, KEY_Y, KEY_Z,
    ]
    /// Room for `inputN`.
    static let sysnameCapacity = 64

    init() throws {
        fd = open("/dev/uinput", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw TestFailure(reason: "open /dev/uinput: \(String(cString: strerror(errno)))") }
        func check(_ result: Int32, _ call: String) throws {
            if result < 0 { throw TestFailure(reason: "\(call): \(String(cString: strerror(errno)))") }
        }
        do {
            try check(cls_ioctl_int(fd, cli_UI_SET_EVBIT(), Int32(EV_KEY)), "UI_SET_EVBIT")
            for key in Self.letterKeys { try check(cls_ioctl_int(fd, cli_UI_SET_KEYBIT(), key), "UI_SET_KEYBIT") }
            var setup = uinput_setup()
            setup.id.bustype = UInt16(BUS_VIRTUAL)
            setup.id.vendor = VirtualPadConfiguration.defaultVendor
            setup.id.product = 0x0002
            withUnsafeMutableBytes(of: &setup.name) { buffer in
                buffer.copyBytes(from: Array("Haptics test keyboard".utf8).prefix(buffer.count - 1))
            }
            try check(cls_ioctl_ptr(fd, cli_UI_DEV_SETUP(), &setup), "UI_DEV_SETUP")
            try check(cls_ioctl_none(fd, cli_UI_DEV_CREATE()), "UI_DEV_CREATE")
            var name = [CChar](repeating: 0, count: Self.sysnameCapacity)
            try check(cls_ioctl_ptr(fd, cli_UI_GET_SYSNAME(UInt32(Self.sysnameCapacity)), &name), "UI_GET_SYSNAME")
            let sysname = String(decoding: name.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let entries =
                (try? FileManager.default.contentsOfDirectory(atPath: "/sys/devices/virtual/input/\(sysname)")) ?? []
            let event = entries.first { $0.hasPrefix("event") }
            guard let event else { throw TestFailure(reason: "the keyboard \(sysname) has no event node") }
            eventNode = "/dev/input/\(event)"
        } catch {
            close(fd)
            throw error
        }
    }

    deinit { destroy() }

    func destroy() {
        guard fd >= 0 else { return }
        _ = cls_ioctl_none(fd, cli_UI_DEV_DESTROY())
        close(fd)
        fd = -1
    }
}

/// Writes `text` to `path`, replacing it.
func writeFile(_ path: String, _ text: String) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { throw TestFailure(reason: "open \(path): \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    let bytes = Array(text.utf8)
    let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    if written != bytes.count { throw TestFailure(reason: "write \(path): \(String(cString: strerror(errno)))") }
}
