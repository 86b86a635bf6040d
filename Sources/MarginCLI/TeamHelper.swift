import ArgumentParser
import Crypto
import Foundation
import MarginCore

/// A `margin-full` kept running for a team library, which answers its reading commands
/// (`search`, `list`, `show`, `recent`, `toc`, `annotations`, `cite`, and the annotations'
/// `list`s) with the library already open: its connections made, PostgreSQL's
/// caches warm, margin's start-up done. A team command otherwise starts `margin-full` and opens a
/// connection to the server, which alone costs more than a whole search of a library on this
/// machine (bench/RESULTS.md).
///
/// On by default, waiting `defaultMinutes` for a command before it stops; `MARGIN_TEAM_HELPER`
/// gives other minutes, or `0` (`off`) for none (`MARGIN_PLAIN=team-helper` turns it off
/// whatever that says). The first such command runs as always and then starts the helper,
/// detached; the next ones are handed to it
/// by `margin`: their arguments and working folder, and their stdin, stdout and stderr
/// themselves (passed over a Unix socket), so the helper writes to the same terminal or pipe and
/// the command's exit status comes back. One command at a time: `margin` runs the command
/// itself when the helper is busy (it says so at once), doesn't take it within 0.1 s, or refuses
/// it (a command it can't parse: its error is then said as always).
///
/// Only this user's processes with the very same settings reach it: the socket is in a folder of
/// this user's alone (`$XDG_RUNTIME_DIR`, else `/tmp/margin-UID`, made 0700 and refused when
/// anyone else could enter it), named by a hash of every setting a command reads (the
/// environment's `MARGIN_*`, home and locale variables, and the executable's identity), and both
/// ends check the other's user id (`SO_PEERCRED`).
enum TeamHelper {
    /// The commands the helper answers: reading ones, which a Ctrl-C may stop anywhere (the
    /// helper then stops with them: `CallerWatch`).
    static let verbs: Set<String> = ["search", "list", "show", "recent", "toc", "annotations", "cite"]
    /// The groups whose `list` it answers.
    static let lists: Set<String> = ["highlight", "memo", "bookmark"]
    /// The helper's own command line: `margin-full __team-helper SOCKET`.
    static let helperCommand = "__team-helper"
    /// How long `margin` waits for the helper to take a command before running it itself.
    static let takeWithin: Int32 = 100
    /// Environment variables besides `MARGIN_*` that change what a command does or prints.
    static let settingVariables: Set<String> = [
        "HOME", "USER", "PGPASSWORD", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "TESSDATA_PREFIX",
        "NO_COLOR", "TERM", "COLUMNS", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ",
    ]

    /// The minutes the helper waits for a command, or nil when it is off: `MARGIN_TEAM_HELPER`'s
    /// (unset or empty: `defaultMinutes`; `0`, `off`, or what is not a number: off).
    static var idleMinutes: Double? {
        guard FastPaths.isOn("team-helper") else { return nil }
        let text = environmentVariables["MARGIN_TEAM_HELPER"] ?? ""
        if text.isEmpty { return defaultMinutes }
        guard let minutes = Double(text), minutes > 0, minutes.isFinite else { return nil }
        return min(minutes, 24 * 60)
    }

    /// How long a helper waits for a command unless told: a session of look-ups and scripts,
    /// not a day.
    static let defaultMinutes: Double = 10

    /// Whether the helper would answer these arguments (hoisted: the verb first).
    static func answers(_ arguments: [String]) -> Bool {
        guard let verb = arguments.first,
            verbs.contains(verb) || (lists.contains(verb) && arguments.dropFirst().first == "list")
        else { return false }
        return !arguments.contains { $0 == "--help" || $0 == "-h" || $0 == "--version" }
    }

    /// The socket of the helper for this process's settings, in a folder of this user's alone;
    /// nil when there is no such folder (or the path would be too long for a socket).
    static func socketPath() -> String? {
        let uid = getuid()
        var folder = environmentVariables["XDG_RUNTIME_DIR"].flatMap { $0.hasPrefix("/") ? $0 : nil }
        if folder == nil || !isPrivateFolder(folder!, owner: uid) {
            folder = "/tmp/margin-\(uid)"
            _ = mkdir(folder!, 0o700)
        }
        guard let folder, isPrivateFolder(folder, owner: uid), let key = settingsKey() else { return nil }
        let path = folder + "/margin-helper-" + key + ".sock"
        return path.utf8.count < 100 ? path : nil
    }

    /// A folder only `owner` can enter: a real folder (not a link), theirs, mode 0700 or less.
    static func isPrivateFolder(_ path: String, owner: uid_t) -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0 else { return false }
        return (info.st_mode & S_IFMT) == S_IFDIR && info.st_uid == owner && info.st_mode & 0o077 == 0
    }

    /// A hash of every setting a command reads: the environment's and `margin-full`'s identity
    /// (a new build is a new helper).
    static func settingsKey() -> String? {
        var info = stat()
        let full = Services.fullExecutable()
        guard stat(full, &info) == 0 else { return nil }
        var parts = [
            "1", full, String(info.st_ino), String(info.st_size), String(info.st_mtim.tv_sec),
            String(info.st_mtim.tv_nsec),
        ]
        for name in environmentVariables.keys.sorted()
        where (name.hasPrefix("MARGIN_") || settingVariables.contains(name)) {
            parts.append(name + "=" + (environmentVariables[name] ?? ""))
        }
        let digest = SHA256.hash(data: Data(parts.joined(separator: "\u{0}").utf8))
        return digest.prefix(16).map { String(format: "%02x", $0) }.joined()
    }

    // MARK: - margin's side

    /// Hands the command to the helper and returns its exit status; nil when the helper didn't
    /// take it (none running, busy, or it refused): then nothing was written, and the caller runs
    /// it. A helper that stops in the middle of a command is one error line (exit 1).
    static func ask(_ arguments: [String]) -> Int32? {
        guard idleMinutes != nil, let path = socketPath(), let socket = connectTo(path) else { return nil }
        defer { close(socket) }
        guard peerIsMe(socket), waitForByte(socket, within: takeWithin) == UInt8(ascii: "H") else { return nil }
        let request = Request(arguments: arguments, directory: FileManager.default.currentDirectoryPath)
        guard let body = try? JSONEncoder().encode(request), body.count < 1 << 20,
            send(socket, frame(body), descriptors: [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO])
        else { return nil }
        switch waitForByte(socket, within: -1) {
        case UInt8(ascii: "S"):
            return nil
        case UInt8(ascii: "X"):
            if let code = readExactly(socket, 4) {
                return Int32(bigEndian: code.withUnsafeBytes { $0.load(as: Int32.self) })
            }
        default:
            break
        }
        Console.error(
            "error: the team helper stopped before the command ended (its output may be cut short); run it again")
        return 1
    }

    /// What the helper running for these settings says of itself, or nil when none answers (or
    /// the helper is off: then nothing is made or asked, not even its folder).
    static func status() -> HelperStatus? {
        guard idleMinutes != nil, let path = socketPath(), let socket = connectTo(path) else { return nil }
        defer { close(socket) }
        guard peerIsMe(socket) else { return nil }
        let first = waitForByte(socket, within: 2_000)
        // Busy with a command: it says no more, but who it is.
        if first == UInt8(ascii: "B"), let pid = peerProcess(socket) { return HelperStatus(pid: Int(pid), busy: true) }
        guard first == UInt8(ascii: "H"),
            let body = try? JSONEncoder().encode(Request(arguments: [], directory: "", status: true)),
            send(socket, frame(body), descriptors: []), waitForByte(socket, within: 2_000) == UInt8(ascii: "J"),
            let length = readExactly(socket, 4)
        else { return nil }
        let count = Int(UInt32(bigEndian: length.withUnsafeBytes { $0.load(as: UInt32.self) }))
        guard count < 1 << 16, let answer = readExactly(socket, count) else { return nil }
        return try? JSONDecoder().decode(HelperStatus.self, from: answer)
    }

    /// Starts the helper for these settings, detached, unless one answers already: after a
    /// command `margin-full` ran that the helper could have.
    static func startIfAbsent(_ arguments: [String]) {
        guard answers(arguments), idleMinutes != nil, let path = socketPath() else { return }
        if let socket = connectTo(path) {
            close(socket)
            return
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Its own session: no terminal's signals, and it outlives this process.
        // (glibc's POSIX_SPAWN_SETSID, 0x80, which Swift sees only under _GNU_SOURCE.)
        posix_spawnattr_setflags(&attributes, 0x80)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        // Nothing else of this process's: a pipe its caller waits to see closed (`$(margin …)`
        // in a script, a test's) must not stay open in the helper for its idle minutes.
        let open = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [])
            .compactMap { Int32($0) }.filter { $0 > 2 && fcntl($0, F_GETFD) >= 0 }
        for descriptor in open { posix_spawn_file_actions_addclose(&actions, descriptor) }
        let full = Services.fullExecutable()
        let words: [String] = [full, helperCommand, path]
        let argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        _ = posix_spawn(&child, full, &actions, &attributes, argv, environ)
    }

    // MARK: - the helper's side

    /// Answers commands on the socket at `path` until none comes for the idle minutes; one
    /// helper a socket (a lock beside it), a stale socket replaced.
    static func serve(at path: String) async -> Int32 {
        guard let minutes = idleMinutes, path == socketPath() else { return 2 }
        let lock = open(path + ".lock", O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard lock >= 0, flock(lock, LOCK_EX | LOCK_NB) == 0 else { return 0 }
        signal(SIGPIPE, SIG_IGN)
        unlink(path)
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0, var address = unixAddress(path) else { return 1 }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0, chmod(path, 0o600) == 0, listen(listener, 16) == 0 else { return 1 }
        defer { unlink(path) }
        // No folder held between commands (each runs in its caller's).
        _ = chdir("/")
        OpenLibraries.keepsOpen = true
        var answered = 0
        let started = Date()
        while true {
            var waiting = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            let ready = poll(&waiting, 1, Int32(min(minutes * 60_000, Double(Int32.max))))
            if ready == 0 { return 0 }
            guard ready > 0 else {
                if errno == EINTR { continue }
                return 1
            }
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { continue }
            _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
            defer { close(connection) }
            guard peerIsMe(connection), writeAll([UInt8(ascii: "H")], connection) else { continue }
            var timeout = timeval(tv_sec: 2, tv_usec: 0)
            setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            guard let (body, descriptors) = receive(connection) else { continue }
            var open = descriptors
            defer { open.forEach { close($0) } }
            guard let request = try? JSONDecoder().decode(Request.self, from: body) else { continue }
            if request.status == true {
                let said = HelperStatus(
                    pid: Int(getpid()), answered: answered, since: ISO8601DateFormatter().string(from: started),
                    idleMinutes: minutes)
                if let json = try? JSONEncoder().encode(said) {
                    _ = writeAll([UInt8(ascii: "J")] + frame(json), connection)
                }
                continue
            }
            guard descriptors.count == 3, let command = parsed(request.arguments), chdir(request.directory) == 0
            else {
                _ = writeAll([UInt8(ascii: "S")], connection)
                continue
            }
            // A caller that goes away before the command ends (Ctrl-C, a kill) stops it; another
            // meanwhile hears at once that the helper is busy.
            let watch = CallerWatch(connection, listener: listener)
            let code = await run(command, on: descriptors)
            watch.stop()
            _ = chdir("/")
            answered += 1
            // The command's output ends here: its descriptors closed before its status is sent.
            open.forEach { close($0) }
            open = []
            let status = withUnsafeBytes(of: code.bigEndian) { Array($0) }
            _ = writeAll([UInt8(ascii: "X")] + status, connection)
        }
    }

    /// The command the arguments name, when it is one the helper answers and they parse; nil
    /// for anything else (`margin` then runs it, and says what is wrong with it).
    static func parsed(_ given: [String]) -> (any ParsableCommand)? {
        let arguments = Margin.hoistGlobalOptions(given)
        guard answers(arguments), (try? Margin.checkCommandNames(arguments)) != nil else { return nil }
        return try? Margin.parseAsRoot(arguments)
    }

    /// Runs a command with stdin, stdout and stderr on the given descriptors, as `margin` would
    /// have, and puts the helper's own back after: its exit status.
    static func run(_ command: any ParsableCommand, on descriptors: [Int32]) async -> Int32 {
        let own = (0..<3).map { dup(Int32($0)) }
        for (index, descriptor) in descriptors.enumerated() { dup2(descriptor, Int32(index)) }
        Console.askTerminalAgain()
        var code: Int32 = 0
        do {
            try await Margin.run(command)
            OpenLibraries.shared.finishWriting()
        } catch {
            code = Margin.report(error, in: type(of: command))
        }
        fflush(nil)
        for (index, descriptor) in own.enumerated() {
            dup2(descriptor, Int32(index))
            close(descriptor)
        }
        Console.askTerminalAgain()
        return code
    }

    // MARK: - the socket

    struct Request: Codable {
        var arguments: [String]
        var directory: String
        var status: Bool?
    }

    static func frame(_ body: Data) -> [UInt8] {
        withUnsafeBytes(of: UInt32(body.count).bigEndian) { Array($0) } + Array(body)
    }

    static func unixAddress(_ path: String) -> sockaddr_un? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        return address
    }

    static func connectTo(_ path: String) -> Int32? {
        guard var address = unixAddress(path) else { return nil }
        let socket = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { return nil }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            close(socket)
            return nil
        }
        return socket
    }

    /// Whether the process at the socket's other end runs as this user.
    static func peerIsMe(_ socket: Int32) -> Bool {
        peer(socket)?.uid == getuid()
    }

    /// The process at the socket's other end, when it runs as this user.
    static func peerProcess(_ socket: Int32) -> pid_t? {
        peer(socket).flatMap { $0.uid == getuid() ? $0.pid : nil }
    }

    /// Who is at the socket's other end (`SO_PEERCRED`).
    static func peer(_ socket: Int32) -> (pid: pid_t, uid: uid_t)? {
        // struct ucred: pid, uid, gid (Swift sees it only under _GNU_SOURCE).
        var credentials: (pid: pid_t, uid: uid_t, gid: gid_t) = (0, 0, 0)
        var length = socklen_t(MemoryLayout<(pid_t, uid_t, gid_t)>.size)
        guard getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0, length == 12 else { return nil }
        return (credentials.pid, credentials.uid)
    }

    /// The next byte, waiting `within` milliseconds (-1: for good); nil at the end or after.
    static func waitForByte(_ socket: Int32, within: Int32) -> UInt8? {
        var waiting = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        while true {
            let ready = poll(&waiting, 1, within)
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { return nil }
            break
        }
        return readExactly(socket, 1)?.first
    }

    static func readExactly(_ socket: Int32, _ count: Int) -> Data? {
        var data = Data(count: count)
        var done = 0
        while done < count {
            let got = data.withUnsafeMutableBytes { read(socket, $0.baseAddress! + done, count - done) }
            if got < 0, errno == EINTR { continue }
            guard got > 0 else { return nil }
            done += got
        }
        return data
    }

    static func writeAll(_ bytes: [UInt8], _ socket: Int32) -> Bool {
        bytes.withUnsafeBytes { MarginCore.writeAll($0, to: socket) == nil }
    }

    /// Sends the bytes with the descriptors (`SCM_RIGHTS`) attached to their first part.
    static func send(_ socket: Int32, _ bytes: [UInt8], descriptors: [Int32]) -> Bool {
        let header = MemoryLayout<cmsghdr>.size
        let length = descriptors.count * MemoryLayout<Int32>.size
        var control = [UInt8](repeating: 0, count: descriptors.isEmpty ? 0 : header + ((length + 7) & ~7))
        if !descriptors.isEmpty {
            control.withUnsafeMutableBytes { raw in
                var message = cmsghdr()
                message.cmsg_len = header + length
                message.cmsg_level = SOL_SOCKET
                message.cmsg_type = Int32(SCM_RIGHTS)
                raw.storeBytes(of: message, as: cmsghdr.self)
                for (index, descriptor) in descriptors.enumerated() {
                    raw.storeBytes(of: descriptor, toByteOffset: header + index * 4, as: Int32.self)
                }
            }
        }
        var bytes = bytes
        let sent = bytes.withUnsafeMutableBytes { data in
            control.withUnsafeMutableBytes { control in
                withMessage(data, control) { sendmsg(socket, &$0, Int32(MSG_NOSIGNAL)) }
            }
        }
        guard sent > 0 else { return false }
        return sent == bytes.count || writeAll(Array(bytes[sent...]), socket)
    }

    /// A message of one buffer of data and one of control bytes (none when empty), for
    /// `sendmsg` and `recvmsg`.
    static func withMessage(
        _ data: UnsafeMutableRawBufferPointer, _ control: UnsafeMutableRawBufferPointer, _ body: (inout msghdr) -> Int
    ) -> Int {
        var vector = iovec(iov_base: data.baseAddress, iov_len: data.count)
        return withUnsafeMutablePointer(to: &vector) { vector in
            var message = msghdr()
            message.msg_iov = vector
            message.msg_iovlen = 1
            message.msg_control = control.count == 0 ? nil : control.baseAddress
            message.msg_controllen = control.count
            return body(&message)
        }
    }

    /// One framed request and the descriptors sent with it; nil when it is not one.
    static func receive(_ socket: Int32) -> (Data, [Int32])? {
        var first = [UInt8](repeating: 0, count: 4096)
        var control = [UInt8](repeating: 0, count: 64)
        var controlLength = 0
        let got = first.withUnsafeMutableBytes { data in
            control.withUnsafeMutableBytes { control in
                withMessage(data, control) { message in
                    let got = recvmsg(socket, &message, Int32(MSG_CMSG_CLOEXEC))
                    controlLength = Int(message.msg_controllen)
                    return got
                }
            }
        }
        var descriptors = [Int32]()
        let header = MemoryLayout<cmsghdr>.size
        if controlLength >= header {
            let message = control.withUnsafeBytes { $0.load(as: cmsghdr.self) }
            if message.cmsg_level == SOL_SOCKET, message.cmsg_type == Int32(SCM_RIGHTS), message.cmsg_len >= header {
                let count = (Int(message.cmsg_len) - header) / 4
                descriptors = (0..<count).map { index in
                    control.withUnsafeBytes { $0.load(fromByteOffset: header + index * 4, as: Int32.self) }
                }
            }
        }
        guard got >= 4 else {
            descriptors.forEach { close($0) }
            return nil
        }
        let length = Int(UInt32(bigEndian: first.withUnsafeBytes { $0.load(as: UInt32.self) }))
        var body = Data(first[4..<got])
        if length > 1 << 20 || body.count > length {
            descriptors.forEach { close($0) }
            return nil
        }
        if body.count < length {
            guard let rest = readExactly(socket, length - body.count) else {
                descriptors.forEach { close($0) }
                return nil
            }
            body += rest
        }
        return (body, descriptors)
    }
}

/// What a running helper says of itself (`margin db status`); only its pid while it runs a
/// command (`busy`).
struct HelperStatus: Codable, Sendable {
    var pid: Int
    /// Commands it answered.
    var answered: Int?
    /// When it started (ISO 8601).
    var since: String?
    /// The minutes it waits for a command before it stops.
    var idleMinutes: Double?
    /// Running a command now.
    var busy: Bool?
}

/// Ends the helper when the `margin` whose command it runs goes away before the command ends
/// (Ctrl-C, a kill): the command stops with it, as it would have in a process of its own. Only
/// reading commands run in the helper (their one write, `show`'s note of a book opened, is a
/// transaction of its own, which PostgreSQL drops whole with the connection), so nothing is left
/// half-written; the next command finds
/// no helper, runs by itself and starts another. `margin` sends nothing after its request, so
/// its end of the socket readable means closed. Meanwhile it tells any other `margin` that
/// comes that the helper is busy ("B"), which then runs its command itself at once, not after
/// `takeWithin` (parallel scripts).
final class CallerWatch: @unchecked Sendable {
    private let wake: (read: Int32, write: Int32)
    private let stopped = DispatchSemaphore(value: 0)

    init(_ connection: Int32, listener: Int32) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            wake = (-1, -1)
            stopped.signal()
            return
        }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        wake = (ends[0], ends[1])
        let (awake, stopped) = (ends[0], stopped)
        Thread.detachNewThread {
            var watched = [
                pollfd(fd: connection, events: Int16(POLLIN), revents: 0),
                pollfd(fd: awake, events: Int16(POLLIN), revents: 0),
                pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
            ]
            while true {
                let ready = poll(&watched, 3, -1)
                if ready < 0, errno == EINTR { continue }
                if ready < 0 || watched[1].revents != 0 { break }
                if watched[0].revents != 0 { _exit(0) }
                if watched[2].revents != 0 {
                    let other = accept(listener, nil, nil)
                    if other >= 0 {
                        _ = TeamHelper.writeAll([UInt8(ascii: "B")], other)
                        close(other)
                    }
                }
            }
            stopped.signal()
        }
    }

    /// The command ended: the watch ends (and its thread) before its caller hears so.
    func stop() {
        if wake.write >= 0 {
            var byte: UInt8 = 1
            _ = write(wake.write, &byte, 1)
        }
        stopped.wait()
        if wake.read >= 0 {
            close(wake.read)
            close(wake.write)
        }
    }
}
