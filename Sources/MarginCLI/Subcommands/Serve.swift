import ArgumentParser
import Foundation
import MarginCore
import MarginKit

extension Margin {
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "serve",
            abstract: "Read, search and highlight the library in a browser.",
            discussion: """
                Serves a reader over the same library the CLI uses: / (the library and search), \
                /books/ID (a book and its annotations), /books/ID/pages/N (the reader: select text \
                and press h to highlight, n for a note, b to bookmark, arrows to turn pages, ? for \
                the keys), and the JSON API under /api (the CLI's --json shapes; see CLI.md).

                On a team library (MARGIN_LIBRARY=postgres://…) the server acts as the URL's \
                user. Its pages show the user's annotations with those the team shares, each \
                with who made it (?all-users=0 shows only the user's own); the API answers as \
                the CLI does (the user's own; the team's shared ones too with --all-users or \
                ?all-users=1). Each of the user's annotations in the reader has a share button; \
                a path on another member's machine (a file:// source) is never shown.

                Loopback only by default. Any other address needs a token ($MARGIN_TOKEN or \
                --token-file FILE; --token T works too but shows in `ps`): every request without \
                it gets 401; a browser signs in once with /login?token=TOKEN. An address counts \
                as loopback when every address its name resolves to is.

                Every web page a user opens can reach a local server, so the server answers only \
                to the names it is reached by (127.0.0.1, localhost, [::1], --host, and each \
                --allow-host; another Host header gets 421, which stops DNS rebinding), takes \
                writes only as JSON from its own pages (403 otherwise), and closes connections \
                that send no complete request within 10 s. Ctrl-C (or SIGTERM) stops the server \
                after the requests in flight are answered.

                Examples:
                  margin serve --open
                  margin serve --port 9000
                  MARGIN_TOKEN=$(openssl rand -hex 16) margin serve --host 0.0.0.0 --allow-host reader.lab.example
                  margin serve --host 0.0.0.0 --token-file ~/.config/margin/serve-token
                """
        )

        @Option(help: ArgumentHelp("Listen on this address.", valueName: "HOST"))
        var host = "127.0.0.1"

        @Option(help: ArgumentHelp("Listen on this port (0 for any free one).", valueName: "PORT"))
        var port = 8484

        @Option(
            help: ArgumentHelp(
                "Require this token of every request (prefer $MARGIN_TOKEN or --token-file: arguments show in ps).",
                valueName: "TOKEN"))
        var token: String?

        @Option(
            help: ArgumentHelp("Require the token in this file (its first line) of every request.", valueName: "FILE"))
        var tokenFile: String?

        @Option(
            name: .customLong("allow-host"),
            help: ArgumentHelp(
                "Also answer requests for this name (NAME or NAME:PORT), e.g. the name a proxy or other machines use; repeatable.",
                valueName: "NAME"))
        var allowedHosts: [String] = []

        @Flag(help: "Open the reader in the default browser.")
        var open = false

        @OptionGroup var global: GlobalOptions

        func validate() throws {
            guard (0...65535).contains(port) else { throw ValidationError("--port must be 0…65535") }
            if let token, token.isEmpty { throw ValidationError("--token can't be empty") }
            if token != nil && tokenFile != nil { throw ValidationError("give --token or --token-file, not both") }
            for name in allowedHosts where name.isEmpty || name.contains("/") || name.contains(where: \.isWhitespace) {
                throw ValidationError("--allow-host takes a host name, not '\(name)'")
            }
        }

        func run() async throws {
            let secret =
                try token ?? tokenFile.map(readTokenFile)
                ?? ProcessInfo.processInfo.environment["MARGIN_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
            guard try isLoopback(host) || secret != nil else {
                throw MarginError.invalidArgument(
                    "serving on \(host) lets other machines in: give a token (--token T or MARGIN_TOKEN) or serve on 127.0.0.1"
                )
            }
            guard let serve = Services.current.serve else { throw NeedsFullExecutable() }
            // Requests read side by side: a connection a core, and as many again for those
            // waiting on the disk.
            let library = try global.openLibrary(
                creating: true, readers: max(4, 2 * ProcessInfo.processInfo.activeProcessorCount))
            let shown = host.contains(":") ? "[\(host)]" : host
            let quiet = global.quiet
            let openBrowser = open
            let settings = ServeSettings(host: host, port: port, token: secret, allowedHosts: allowedHosts)
            try await serve(library, settings) { bound in
                let address = "http://\(shown == "0.0.0.0" ? "127.0.0.1" : shown):\(bound)/"
                if !quiet {
                    Console.error(
                        "serving \(library.database.path ?? library.paths.database) at \(address) (Ctrl-C stops)")
                }
                if openBrowser { launchBrowser(secret.map { "\(address)login?token=\($0)" } ?? address) }
            }
            if !quiet { Console.error("stopped") }
        }
    }
}

/// Whether an address is this machine only: every address the name resolves to is loopback
/// (`127.lan.example` is judged by where it leads, not by its spelling).
private func isLoopback(_ host: String) throws -> Bool {
    try resolvesToLoopbackOnly(host)
}

/// The token in `path`: its first line, without surrounding white space.
private func readTokenFile(_ path: String) throws -> String {
    guard let handle = FileHandle(forReadingAtPath: path) else {
        throw MarginError.invalidArgument("cannot read the token file \(path): \(String(cString: strerror(errno)))")
    }
    defer { try? handle.close() }
    let data = (try? handle.read(upToCount: 4096)) ?? nil ?? Data()
    let line = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
    let token = line.trimmingCharacters(in: .whitespaces)
    guard !token.isEmpty else { throw MarginError.invalidArgument("the token file \(path) is empty") }
    return token
}

/// Opens `url` in the desktop's browser, if there is one; says so when there isn't.
private func launchBrowser(_ url: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["xdg-open", url]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    if (try? process.run()) == nil { Console.error("note: could not open a browser; open \(url)") }
}
