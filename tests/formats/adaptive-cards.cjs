// Checks Microsoft Teams messages as Teams Workflows take them: each a `message` with one
// Adaptive Card attachment, the card of version 1.4 or lower, parsed and validated by
// Microsoft's own Adaptive Cards library at the version it declares. Prints the problems found,
// one a line, and exits 1 when there are any.
//
//   node adaptive-cards.cjs MESSAGES.json      (a JSON array of message bodies)
'use strict';
const fs = require('fs');
const path = require('path');
const AC = require(path.join(__dirname, 'node_modules/adaptivecards/dist/adaptivecards.js'));

const CARD = 'application/vnd.microsoft.card.adaptive';
const versions = { '1.0': AC.Versions.v1_0, '1.1': AC.Versions.v1_1, '1.2': AC.Versions.v1_2, '1.3': AC.Versions.v1_3, '1.4': AC.Versions.v1_4 };

function problems(message, index) {
  const out = [];
  const at = (text) => out.push(`message ${index}: ${text}`);
  if (message.type !== 'message') at(`type ${JSON.stringify(message.type)}, not "message"`);
  const attachments = Array.isArray(message.attachments) ? message.attachments : [];
  if (attachments.length !== 1) at(`${attachments.length} attachments, not one`);
  for (const a of attachments) {
    if (a.contentType !== CARD) at(`contentType ${JSON.stringify(a.contentType)}`);
    const card = a.content || {};
    if (card.type !== 'AdaptiveCard') at(`content type ${JSON.stringify(card.type)}`);
    const version = versions[card.version];
    if (!version) {
      at(`card version ${JSON.stringify(card.version)}: Teams renders 1.4 or lower`);
      continue;
    }
    const parsed = new AC.AdaptiveCard();
    const context = new AC.SerializationContext();
    context.targetVersion = version;
    parsed.parse(card, context);
    for (let i = 0; i < context.eventCount; i++) at(context.getEventAt(i).message);
    for (const e of parsed.validateProperties().validationEvents) at(e.message);
  }
  return out;
}

const messages = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const found = messages.flatMap(problems);
for (const p of found) console.log(p);
process.exit(found.length ? 1 : 0);
