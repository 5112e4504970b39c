//! okgin-bot (Rust): an example bot for the okgin referee. It plays Oklahoma Gin and Gin
//! in the Box in every role with the "simple player" strategy; see ../README.md.

mod arena;
mod cards;
mod client;
mod entropy;
mod melds;
mod strategy;
mod wire;

use std::io::BufRead;
use std::process::exit;
use std::sync::atomic::Ordering;
use std::time::Duration;

const USAGE: &str = "usage: okgin-bot --connect ENDPOINT [--token TOKEN | --table NAME | --variant oklahoma|box]
                 [--name NAME] [--games N] [--give-up-ms MS] [--verbose]
       okgin-bot --eval

  --connect ENDPOINT  the referee, e.g. tcp://127.0.0.1:7117 (or $OKGIN_ENDPOINT)
  --token TOKEN       a reserved seat's token from the organiser (or $OKGIN_TOKEN)
  --table NAME        join (or create) this named table
  --variant V         otherwise: quick-match queue of this variant (default oklahoma)
  --name NAME         display name (default rust-bot)
  --games N           games to play, then leave (default 1; 0 = until the referee stops)
  --give-up-ms MS     stop reconnecting to a silent referee after this long (default 60000)
  --verbose           log every move to stderr
  --eval              print the least deadwood of each hand read from stdin

At an arena (protocol 1.6): set OKGIN_ARENA (its endpoint), OKGIN_ACCOUNT and
OKGIN_KEY_FILE (the account's key, mode 0600). The bot then seeks --games games of
--variant and plays each where the arena says.";

fn usage_error(what: &str) -> ! {
    eprintln!("okgin-bot: {}\n\n{}", what, USAGE);
    exit(2);
}

/// Prints the least deadwood of each hand read from stdin (one hand a line), then the
/// deadwood of the arrangement found: they must agree.
fn eval_hands() -> i32 {
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap_or_default();
        match cards::hand_of(line.split_whitespace()) {
            Some(hand) => println!("{} {}", melds::deadwood(hand), melds::best_arrangement(hand).deadwood),
            None => {
                eprintln!("okgin-bot: not a hand: {}", line);
                return 2;
            }
        }
    }
    0
}

/// The arena's word on a game, one line on stderr (as the game_end line is).
fn over_line(name: &str, over: &arena::ArenaOver) -> String {
    let rating = match &over.rating {
        Some(r) => format!(
            "rating {} -> {} (deviation {}{})",
            r.before,
            r.after,
            r.deviation,
            if r.provisional { ", provisional" } else { "" }
        ),
        None => "not rated".to_string(),
    };
    format!("okgin-bot[rust {}] arena game {}: {} ({}), {}", name, over.game, over.result, over.termination, rating)
}

/// OKGIN_ARENA set: sign in once; for each game seek, play the game the arena names at its
/// shard exactly as a reserved seat (the token replaces --token, the shard --connect, its
/// CURVE key when it has one), then read the arena's game_over.
fn play_at_arena(opt: client::Options, arena: String) -> i32 {
    let account = std::env::var("OKGIN_ACCOUNT").unwrap_or_default();
    if account.is_empty() || account.chars().count() > 40 {
        usage_error("OKGIN_ARENA needs OKGIN_ACCOUNT (the account's name, 1 to 40 characters)");
    }
    let key = match arena::read_key(std::env::var("OKGIN_KEY_FILE").ok()) {
        Ok(k) => k,
        Err(e) => {
            eprintln!("okgin-bot: {}", e);
            return 2;
        }
    };
    let ao = arena::ArenaOptions {
        endpoint: arena,
        account,
        key,
        variant: opt.variant.clone(),
        name: opt.name.clone(),
        verbose: opt.verbose,
    };
    let refused = |(status, why): (i32, String)| {
        if !why.is_empty() {
            eprintln!("okgin-bot: {}", why);
        }
        status
    };
    let mut session = match arena::ArenaSession::open(ao) {
        Ok(s) => s,
        Err(e) => return refused(e),
    };
    let mut played = 0;
    let mut status = 0;
    while opt.games == 0 || played < opt.games {
        let game = match session.next_game() {
            Ok(g) => g,
            Err(e) => {
                status = refused(e);
                break;
            }
        };
        let at_table = client::Options {
            endpoint: game.endpoint,
            name: opt.name.clone(),
            token: Some(game.token),
            table: None,
            variant: opt.variant.clone(),
            games: 1,
            give_up: opt.give_up,
            verbose: opt.verbose,
            server_key: game.server_key,
        };
        status = match client::Client::new(at_table) {
            Ok(mut c) => c.run(),
            Err(e) => {
                eprintln!("okgin-bot: cannot create a ZeroMQ socket: {}", e);
                2
            }
        };
        if status != 0 || client::STOP.load(Ordering::SeqCst) {
            break;
        }
        match session.game_over(&game.game, Duration::from_secs(30)) {
            Some(over) => eprintln!("{}", over_line(&opt.name, &over)),
            None => eprintln!("okgin-bot[rust {}] arena game {}: no game_over from the arena", opt.name, game.game),
        }
        played += 1;
    }
    session.close();
    status
}

extern "C" fn on_signal(_: libc::c_int) {
    client::STOP.store(true, Ordering::SeqCst);
}

fn main() {
    let mut opt = client::Options {
        endpoint: std::env::var("OKGIN_ENDPOINT").unwrap_or_default(),
        name: "rust-bot".to_string(),
        token: std::env::var("OKGIN_TOKEN").ok().filter(|t| !t.is_empty()),
        table: None,
        variant: "oklahoma".to_string(),
        games: 1,
        give_up: Duration::from_millis(60_000),
        verbose: false,
        server_key: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--eval" => exit(eval_hands()),
            "-h" | "--help" => {
                println!("{}", USAGE);
                return;
            }
            "--verbose" => opt.verbose = true,
            _ => {
                let value = args.next().unwrap_or_else(|| usage_error("missing value or unknown option"));
                match arg.as_str() {
                    "--connect" => opt.endpoint = value,
                    "--token" => opt.token = Some(value),
                    "--table" => opt.table = Some(value),
                    "--variant" => opt.variant = value,
                    "--name" => opt.name = value,
                    "--games" => opt.games = value.parse().unwrap_or_else(|_| usage_error("--games must be >= 0")),
                    "--give-up-ms" => {
                        let ms: u64 = value.parse().unwrap_or_else(|_| usage_error("--give-up-ms must be > 0"));
                        opt.give_up = Duration::from_millis(ms.max(1));
                    }
                    _ => usage_error(&format!("unknown option {}", arg)),
                }
            }
        }
    }
    let arena = std::env::var("OKGIN_ARENA").ok().filter(|a| !a.is_empty());
    if opt.endpoint.is_empty() && arena.is_none() {
        usage_error("--connect ENDPOINT is required");
    }
    if opt.variant != "oklahoma" && opt.variant != "box" {
        usage_error("--variant must be oklahoma or box");
    }
    if opt.name.is_empty() || opt.name.chars().count() > 40 {
        usage_error("--name must have 1 to 40 characters");
    }
    let handler: extern "C" fn(libc::c_int) = on_signal;
    unsafe {
        libc::signal(libc::SIGINT, handler as libc::sighandler_t);
        libc::signal(libc::SIGTERM, handler as libc::sighandler_t);
    }
    if let Some(arena) = arena {
        exit(play_at_arena(opt, arena));
    }
    let status = match client::Client::new(opt) {
        Ok(mut c) => c.run(),
        Err(e) => {
            eprintln!("okgin-bot: cannot create a ZeroMQ socket: {}", e);
            2
        }
    };
    exit(status);
}
