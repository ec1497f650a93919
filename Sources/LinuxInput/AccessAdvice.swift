// What to tell a user who may not open a gamepad's nodes: it depends on whether a udev daemon runs, since only
// then do rules and groups reach a node as it appears, and on whether our rule is installed already.
@_spi(Internals) import LinuxSystem

/// The fix for a node this user may not open, for an event node or a pad's hidraw node, worded for a system
/// with a udev daemon (the project's rule, or the `input` group, to which udev's own rules give event nodes and
/// ours a driven pad's hidraw nodes) or without one (devtmpfs makes every node root's alone, mode 600, and
/// nothing changes that unless mdev, or the user, does).
package enum AccessAdvice {
    /// The mdev line that gives every event node to the `input` group, as udev's own rules do.
    package static let mdevEventLine = "event[0-9]+ root:input 0660 =input/"
    /// The mdev line that gives hidraw nodes to the `input` group.
    package static let mdevHidrawLine = "hidraw[0-9]+ root:input 0660"

    /// The folders udev reads rules from, where `make install` (or a package) may have put ours.
    package static let ruleFolders = [
        "/etc/udev/rules.d", "/run/udev/rules.d", "/usr/lib/udev/rules.d", "/lib/udev/rules.d",
    ]
    /// The rule's file name.
    package static let ruleName = "70-haptics-gamepads.rules"

    /// Where the rule is installed on this system; nil when it is not.
    package static func installedRule(exists: (String) -> Bool = { Sys.exists($0) }) -> String? {
        ruleFolders.map { "\($0)/\(ruleName)" }.first(where: exists)
    }

    /// For event nodes (`haptics devices`, `haptics probe`): a paragraph starting "To fix:". With the rule
    /// installed (`installedRule`), the node was made before it or this session has no seat: replug, else the group.
    package static func eventNodes(
        udevDaemonRuns: Bool = DeviceDiscovery.udevDaemonIsRunning, installedRule: String? = installedRule()
    ) -> String {
        guard udevDaemonRuns else {
            return "To fix: no udev daemon runs here, so the kernel's nodes stay root's alone (mode 600) and neither "
                + "the project's udev rule nor the `input` group reaches them. Run as root, or give the nodes to "
                + "a group you are in as they appear: with mdev, `\(mdevEventLine)` in /etc/mdev.conf; by hand, "
                + "`sudo chgrp input NODE && sudo chmod g+rw NODE` (again after each replug)."
        }
        if let installedRule {
            return "To fix: the udev rule is installed (\(installedRule)): unplug and replug the pad (or run "
                + "`sudo udevadm trigger --subsystem-match=input --subsystem-match=hidraw --action=change`) so that it "
                + "applies. If the pad stays denied, this session has no seat to give access to (an ssh login, no "
                + "logind): add yourself to the `input` group (`sudo usermod -aG input $USER`, then log in again), "
                + "which also opens keyboards and mice to every program you run."
        }
        return "To fix: install the udev rule that gives the logged-in user access to gamepads and joysticks only: "
            + "`sudo make install-udev` (udev/70-haptics-gamepads.rules, see docs/device-access.md), then unplug "
            + "and replug the pad. Alternatively add yourself to the `input` group (`sudo usermod -aG input "
            + "$USER`, then log in again), which also opens keyboards and mice to every program you run."
    }

    /// For a pad's hidraw node that may not be written (its voice coils, HD rumble or trigger motors).
    package static func hidrawNode(
        _ node: String, udevDaemonRuns: Bool = DeviceDiscovery.udevDaemonIsRunning,
        installedRule: String? = installedRule()
    ) -> String {
        guard udevDaemonRuns else {
            return "\(node) may not be written by this user: no udev daemon runs, so it is root's alone; run as "
                + "root, or give it to a group you are in (`sudo chgrp input \(node) && sudo chmod g+rw \(node)`, "
                + "or `\(mdevHidrawLine)` in /etc/mdev.conf)"
        }
        if let installedRule {
            return "\(node) may not be written by this user: the udev rule is installed (\(installedRule)): plug the "
                + "pad in again so that it applies; without a seat session (ssh, no logind) join the `input` group, to "
                + "which the rule gives the node"
        }
        return "\(node) may not be written by this user: install the udev rule (udev/70-haptics-gamepads.rules, "
            + "`sudo make install-udev`) and plug the pad in again; without a seat session (ssh, no logind) the "
            + "rule opens it to the `input` group instead"
    }
}
