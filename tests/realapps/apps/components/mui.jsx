// MUI (Material UI, with its MIT X packages for the date picker, data grid and tree view): one
// page with every widget kind. Bundled by scripts/ensure-realapps.sh with esbuild. The app's
// state, which the tests judge, is localStorage "state" (a key per widget), written on change.
import React, {useState} from "react";
import {createRoot} from "react-dom/client";
import dayjs from "dayjs";
import {
  Autocomplete, Box, Button, Checkbox, Dialog, DialogActions, DialogContent, DialogTitle, FormControl,
  FormControlLabel, FormLabel, InputLabel, Menu, MenuItem, Radio, RadioGroup, Select, Slider, Snackbar, Switch,
  Tab, Tabs, TextField, Typography,
} from "@mui/material";
import {styled} from "@mui/material/styles";
import {LocalizationProvider} from "@mui/x-date-pickers/LocalizationProvider";
import {AdapterDayjs} from "@mui/x-date-pickers/AdapterDayjs";
import {DatePicker} from "@mui/x-date-pickers/DatePicker";
import {DataGrid} from "@mui/x-data-grid";
import {SimpleTreeView} from "@mui/x-tree-view/SimpleTreeView";
import {TreeItem} from "@mui/x-tree-view/TreeItem";

const state = JSON.parse(localStorage.getItem("state") || "{}");
function save(key, value) {
  state[key] = value;
  localStorage.setItem("state", JSON.stringify(state));
}
const COUNTRIES = ["Argentina", "Brazil", "Canada", "Denmark", "Norway", "Peru", "Portugal", "Spain", "Sweden"];
const PRODUCTS = [{id: 1, product: "Coffee", price: 4}, {id: 2, product: "Tea", price: 3},
  {id: 3, product: "Cocoa", price: 5}];
save("products", PRODUCTS);

// The MUI documentation's file-upload pattern: a button that is a <label> for a hidden input.
const VisuallyHiddenInput = styled("input")({
  clip: "rect(0 0 0 0)", clipPath: "inset(50%)", height: 1, overflow: "hidden", position: "absolute",
  bottom: 0, left: 0, whiteSpace: "nowrap", width: 1,
});

function Section({title, children}) {
  return <Box component="section" sx={{mb: 1}}><Typography variant="subtitle2" component="h2">{title}</Typography>{children}</Box>;
}

function ActionsMenu() {
  const [anchor, setAnchor] = useState(null);
  const [subAnchor, setSubAnchor] = useState(null);
  const pick = (action) => { save("action", action); setSubAnchor(null); setAnchor(null); };
  return <>
    <Button variant="outlined" aria-haspopup="menu" aria-expanded={Boolean(anchor)} onClick={(e) => setAnchor(e.currentTarget)}>Actions</Button>
    <Menu anchorEl={anchor} open={Boolean(anchor)} onClose={() => { setSubAnchor(null); setAnchor(null); }}>
      <MenuItem onClick={() => pick("copy")}>Copy link</MenuItem>
      <MenuItem aria-haspopup="menu" aria-expanded={Boolean(subAnchor)} onClick={(e) => setSubAnchor(e.currentTarget)}>Share ▸</MenuItem>
      <MenuItem onClick={() => pick("archive")}>Archive</MenuItem>
    </Menu>
    <Menu anchorEl={subAnchor} open={Boolean(subAnchor)} onClose={() => setSubAnchor(null)}
          anchorOrigin={{vertical: "top", horizontal: "right"}}>
      <MenuItem onClick={() => pick("share-email")}>Email</MenuItem>
      <MenuItem onClick={() => pick("share-chat")}>Chat</MenuItem>
    </Menu>
  </>;
}

function App() {
  const [plan, setPlan] = useState("free");
  const [tab, setTab] = useState(0);
  const [open, setOpen] = useState(false);
  const [project, setProject] = useState("Apollo");
  const [draft, setDraft] = useState("Apollo");
  const [toast, setToast] = useState("");
  const [code] = useState(() => "K" + Math.floor(1000 + Math.random() * 9000));
  save("code", code);
  return (
    <LocalizationProvider dateAdapter={AdapterDayjs}>
      <Box component="main" sx={{p: 2, display: "grid", gridTemplateColumns: "repeat(auto-fill, minmax(300px, 1fr))", gap: 1}}>
        <Typography variant="h5" component="h1" sx={{gridColumn: "1 / -1"}}>Store settings</Typography>
        <Section title="Consent">
          <FormControlLabel control={<Checkbox onChange={(e) => save("terms", e.target.checked)}/>} label="Accept the terms"/>
        </Section>
        <Section title="Size">
          <FormControl>
            <FormLabel id="size-label">T-shirt size</FormLabel>
            <RadioGroup row aria-labelledby="size-label" defaultValue="small" onChange={(e) => save("size", e.target.value)}>
              <FormControlLabel value="small" control={<Radio/>} label="Small"/>
              <FormControlLabel value="medium" control={<Radio/>} label="Medium"/>
              <FormControlLabel value="large" control={<Radio/>} label="Large"/>
            </RadioGroup>
          </FormControl>
        </Section>
        <Section title="Network">
          <FormControlLabel control={<Switch onChange={(e) => save("wifi", e.target.checked)}/>} label="Wi-Fi"/>
        </Section>
        <Section title="Audio">
          <Typography id="volume-label">Volume</Typography>
          <Slider aria-labelledby="volume-label" defaultValue={30} valueLabelDisplay="auto"
                  onChangeCommitted={(e, v) => save("volume", v)} sx={{width: 240}}/>
        </Section>
        <Section title="Plan">
          <FormControl size="small" sx={{minWidth: 160}}>
            <InputLabel id="plan-label">Plan</InputLabel>
            <Select labelId="plan-label" label="Plan" value={plan} onChange={(e) => { setPlan(e.target.value); save("plan", e.target.value); }}>
              <MenuItem value="free">Free</MenuItem><MenuItem value="team">Team</MenuItem>
              <MenuItem value="pro">Pro</MenuItem><MenuItem value="enterprise">Enterprise</MenuItem>
            </Select>
          </FormControl>
        </Section>
        <Section title="Shipping">
          <Autocomplete options={COUNTRIES} sx={{width: 240}} size="small" onChange={(e, v) => save("country", v)}
                        renderInput={(params) => <TextField {...params} label="Country"/>}/>
        </Section>
        <Section title="Actions"><ActionsMenu/></Section>
        <Section title="Details">
          <Tabs value={tab} onChange={(e, v) => { setTab(v); save("tab", ["overview", "billing", "team"][v]); }} aria-label="Details">
            <Tab label="Overview"/><Tab label="Billing"/><Tab label="Team"/>
          </Tabs>
          <div role="tabpanel">{["The store overview.", "Invoices are sent monthly.", "Three members."][tab]}</div>
        </Section>
        <Section title="Schedule">
          <DatePicker label="Launch date" defaultValue={dayjs("2026-03-01")}
                      onChange={(d) => save("date", d && d.isValid() ? d.format("YYYY-MM-DD") : null)}/>
        </Section>
        <Section title="Store">
          <p>Store name: <output>{project}</output></p>
          <Button variant="outlined" onClick={() => { setDraft(project); setOpen(true); }}>Rename store</Button>
          <Dialog open={open} onClose={() => setOpen(false)}>
            <DialogTitle>Rename store</DialogTitle>
            <DialogContent><TextField autoFocus margin="dense" label="New name" value={draft}
                                      onChange={(e) => setDraft(e.target.value)}/></DialogContent>
            <DialogActions>
              <Button onClick={() => setOpen(false)}>Cancel</Button>
              <Button onClick={() => { setProject(draft); save("project", draft); setOpen(false); }}>Save name</Button>
            </DialogActions>
          </Dialog>
        </Section>
        <Section title="Prices">
          <div style={{height: 220, width: 300}}>
            <DataGrid rows={PRODUCTS} hideFooter columns={[
              {field: "product", headerName: "Product", width: 130},
              {field: "price", headerName: "Price", type: "number", width: 110, editable: true}]}
              processRowUpdate={(row) => {
                const i = PRODUCTS.findIndex((r) => r.id === row.id);
                PRODUCTS[i] = row; save("products", PRODUCTS); return row;
              }}/>
          </div>
        </Section>
        <Section title="Files">
          <SimpleTreeView aria-label="Files" onSelectedItemsChange={(e, id) => save("file", id)}>
            <TreeItem itemId="documents" label="Documents">
              <TreeItem itemId="report" label="Report.pdf"/><TreeItem itemId="budget" label="Budget.xlsx"/>
            </TreeItem>
            <TreeItem itemId="photos" label="Photos"/>
          </SimpleTreeView>
        </Section>
        <Section title="Attachment">
          <Button component="label" variant="contained">
            Attach a file
            <VisuallyHiddenInput type="file" onChange={(e) => save("upload", [...e.target.files].map((f) => f.name))}/>
          </Button>
        </Section>
        <Section title="Notifications">
          <TextField size="small" label="Confirmation code" onChange={(e) => save("confirmation", e.target.value)}/>
          <Button onClick={() => setToast(`Your code is ${code}`)}>Send code</Button>
          <Snackbar open={Boolean(toast)} message={toast} onClose={() => {}}
                    anchorOrigin={{vertical: "top", horizontal: "right"}}/>
        </Section>
      </Box>
    </LocalizationProvider>
  );
}

createRoot(document.getElementById("root")).render(<App/>);
