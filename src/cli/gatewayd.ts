#!/usr/bin/env node
import { Command, Option } from 'commander';
import { VERSION } from '../daemon/version.js';
// Commands load their modules on use, so --help and config check start fast.
const commands = () => import('./commands.js');

const program = new Command('gatewayd')
  .description('AI governance gateway: SNI router, DNS resolver, enrollment portal and trigger API')
  .version(VERSION, '-V, --version')
  .showHelpAfterError()
  .configureHelp({ showGlobalOptions: true });

const configOption = () => new Option('-c, --config <file>', 'the YAML config file').makeOptionMandatory();

program
  .command('serve')
  .description('run the daemon in the foreground (SIGHUP reloads the config, SIGTERM drains and stops)')
  .addOption(configOption())
  .action(async (opts) => (await commands()).runServe(opts.config));

const config = program.command('config').description('work with the config file');
config
  .command('check')
  .description('validate the config; exit 0 when good, else print file:line: key: reason and exit 1')
  .addOption(configOption())
  .action(async (opts) => (await commands()).runConfigCheck(opts.config));

const ca = program.command('ca').description('the gateway certificate authority');
ca.command('init')
  .description('create the CA in dataDir unless one exists (the daemon also does this on first start)')
  .addOption(configOption())
  .action(async (opts) => (await commands()).runCaInit(opts.config));
ca.command('export')
  .description('write the CA certificate to stdout, for MDM profiles and device trust stores')
  .addOption(configOption())
  .addOption(new Option('-f, --format <format>', 'pem or der').choices(['pem', 'der']).default('pem'))
  .action(async (opts) => (await commands()).runCaExport(opts.config, opts.format));

const admin = program.command('admin').description('local admin accounts');
admin
  .command('add')
  .description('create an admin, or set the password of an existing one (password read from stdin)')
  .addOption(configOption())
  .requiredOption('-u, --username <name>', 'the admin username')
  .option('-t, --tenant <id>', 'limit the admin to one tenant (a new admin without it manages every tenant)')
  .option('--appliance', 'make an existing tenant admin an appliance admin (a password change alone keeps the scope)')
  .action(async (opts) => (await commands()).runAdminAdd(opts.config, opts.username, opts.tenant, opts.appliance === true));

await program.parseAsync(process.argv);
