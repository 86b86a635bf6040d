import ArgumentParser
import Foundation
import MarginCore
import MarginKit

/// How a PDF's password is given without showing it to `ps`: asked for on the terminal, read
/// from a file descriptor, or (visible, for scripts that accept that) on the command line.
struct PasswordOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The password of an encrypted PDF; - asks for it on the terminal without showing it (or reads a line from stdin).",
            valueName: "P|-"))
    var password: String?

    @Option(help: ArgumentHelp("Read the password from file descriptor N (e.g. 3 with 3< file).", valueName: "N"))
    var passwordFd: Int32?

    func validate() throws {
        if password != nil && passwordFd != nil {
            throw ValidationError("give either --password or --password-fd, not both")
        }
        if let passwordFd, passwordFd < 0 {
            throw ValidationError("--password-fd must be a file descriptor (0 or more)")
        }
    }

    /// The password, read now if it comes from the terminal or a descriptor.
    func read() throws -> String? {
        if let passwordFd { return try readLine(from: passwordFd) }
        guard password == "-" else { return password }
        if isatty(STDIN_FILENO) == 1 {
            guard let typed = getpass("PDF password: ") else {
                throw MarginError.invalidArgument("no password was typed")
            }
            return String(cString: typed)
        }
        return try readLine(from: STDIN_FILENO)
    }

    private func readLine(from descriptor: Int32) throws -> String {
        var bytes = [UInt8]()
        var byte: UInt8 = 0
        while true {
            let count = Foundation.read(descriptor, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            if count < 0 {
                throw MarginError.invalidArgument(
                    "cannot read the password from descriptor \(descriptor): \(String(cString: strerror(errno)))")
            }
            if count == 0 || byte == 10 { break }
            bytes.append(byte)
            if bytes.count > 4096 {
                throw MarginError.invalidArgument("the password read from descriptor \(descriptor) is too long")
            }
        }
        if bytes.last == 13 { bytes.removeLast() }
        guard !bytes.isEmpty else {
            throw MarginError.invalidArgument("no password was read from descriptor \(descriptor)")
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
