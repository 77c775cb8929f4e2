#!/usr/bin/env node
// The command is built into dist/; this launcher is in the sources so that an install
// in the workspace, before any build, can link the command.
import "../dist/cli.js";
