import HapticTestDevices
import ArgumentParser

@main
struct Haptics: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "haptics",
        abstract: "Feel, probe and replay Core Haptics (AHAP) patterns on Linux gamepads through evdev force feedback.",
        subcommands: [
            VirtualPadCommand.self,
            EmulateCommand.self,
            DevicesCommand.self,
            ProbeCommand.self,
            MonitorCommand.self,
            ValidateCommand.self,
            RenderCommand.self,
            PlayCommand.self,
            ReplayCommand.self,
            FeedbackCommand.self,
        ])
}
