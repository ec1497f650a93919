import ArgumentParser

struct VirtualPadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "virtual-pad", abstract: "Create a uinput force-feedback gamepad (work in progress).")
    func run() async throws {
        throw ValidationError("virtual-pad is not implemented yet")
    }
}
